import asyncio
import json
import os
import time

import httpx
import openai
import pytest

from iris_testing.llm_server import Failure, ScriptedLLM
from iris_testing.server import serve

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = pytest.importorskip("litellm")
litellm.suppress_debug_info = True

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


@pytest.fixture
def llm():
    return ScriptedLLM()


@pytest.fixture
def url(llm):
    with serve(llm.app) as server:
        yield server.url


def complete(url, **kwargs):
    kwargs.setdefault("messages", [{"role": "user", "content": "hello"}])
    return litellm.completion(
        model="openai/scripted", api_base=f"{url}/v1", api_key="x", num_retries=0, **kwargs
    )


def test_text_reply_through_litellm(llm, url):
    llm.reply("Hello, Ada.")

    response = complete(url, messages=[{"role": "user", "content": "I am Ada, say hi"}])

    assert response.choices[0].message.content == "Hello, Ada."
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.prompt_tokens > 0
    assert response.usage.completion_tokens > 0
    assert response.usage.total_tokens == (
        response.usage.prompt_tokens + response.usage.completion_tokens
    )
    assert llm.requests[0]["messages"] == [{"role": "user", "content": "I am Ada, say hi"}]
    assert llm.requests[0]["model"] == "scripted"
    assert llm.pending == 0


def test_tool_call_through_async_litellm(llm, url):
    llm.tool_call("get_weather", {"city": "Paris"}).reply("Sunny in Paris.")

    async def run():
        kwargs = dict(model="openai/m", api_base=f"{url}/v1", api_key="x", num_retries=0)
        messages = [{"role": "user", "content": "weather in Paris?"}]
        first = await litellm.acompletion(messages=messages, tools=[WEATHER_TOOL], **kwargs)
        call = first.choices[0].message.tool_calls[0]
        messages += [
            first.choices[0].message.model_dump(),
            {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
        ]
        second = await litellm.acompletion(messages=messages, tools=[WEATHER_TOOL], **kwargs)
        return first, second

    first, second = asyncio.run(run())

    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}
    assert second.choices[0].message.content == "Sunny in Paris."
    sent = llm.requests
    assert sent[0]["tools"][0]["function"]["name"] == "get_weather"
    assert sent[1]["messages"][-1] == {"role": "tool", "tool_call_id": call.id, "content": "sunny"}


def test_several_tool_calls_in_one_message_have_unique_ids(llm, url):
    llm.tool_calls([("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})])
    llm.tool_call("get_weather", {"city": "Rome"})
    llm.tool_call("get_weather", {"city": "Bern"}, call_id="call_fixed")

    calls = complete(url, tools=[WEATHER_TOOL]).choices[0].message.tool_calls
    more = complete(url, tools=[WEATHER_TOOL]).choices[0].message.tool_calls
    fixed = complete(url, tools=[WEATHER_TOOL]).choices[0].message.tool_calls

    assert [json.loads(c.function.arguments)["city"] for c in calls] == ["Paris", "Oslo"]
    ids = [c.id for c in calls + more]
    assert len(set(ids)) == 3
    assert fixed[0].id == "call_fixed"


def test_rate_limit_then_success(llm, url):
    llm.fail(429).reply("ok now")

    with pytest.raises(litellm.RateLimitError):
        complete(url)
    assert complete(url).choices[0].message.content == "ok now"
    assert len(llm.requests) == 2


def test_429_carries_retry_after_and_openai_error_shape(llm, url):
    llm.fail(429, headers={"Retry-After": "7"}).fail(500, "boom", times=2)

    limited = httpx.post(f"{url}/v1/chat/completions", json={"messages": []})
    failures = [httpx.post(f"{url}/v1/chat/completions", json={}) for _ in range(2)]

    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "7"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert [f.status_code for f in failures] == [500, 500]
    assert failures[0].json()["error"]["message"] == "boom"


def test_authentication_error(llm, url):
    llm.fail(401)

    with pytest.raises(litellm.AuthenticationError):
        complete(url)


def test_context_length_error(llm, url):
    llm.fail(400)

    with pytest.raises(litellm.ContextWindowExceededError):
        complete(url)


def test_empty_script_fails_loudly(llm, url):
    response = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "anyone?"}]},
    )

    assert response.status_code == 500
    assert "script ran out" in response.json()["error"]["message"]
    assert "anyone?" in response.json()["error"]["message"]


def test_handler_answers_when_queue_is_empty(llm, url):
    def handler(request):
        last = request["messages"][-1]
        if last["role"] == "tool":
            return f"tool said {last['content']}"
        if "weather" in last["content"]:
            return {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lima"}}]}
        return Failure(503)

    llm.reply("queued first")
    llm.handler = handler

    assert complete(url).choices[0].message.content == "queued first"
    calls = complete(url, messages=[{"role": "user", "content": "weather?"}])
    call = calls.choices[0].message.tool_calls[0]
    tool_result = [{"role": "tool", "tool_call_id": call.id, "content": "warm"}]
    assert complete(url, messages=tool_result).choices[0].message.content == "tool said warm"
    with pytest.raises(litellm.ServiceUnavailableError):
        complete(url)


def test_openai_client_non_stream_and_models(llm, url):
    llm.reply("plain answer")
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)

    completion = client.chat.completions.create(
        model="scripted-model", messages=[{"role": "user", "content": "hi"}]
    )

    assert completion.choices[0].message.content == "plain answer"
    assert completion.id.startswith("chatcmpl-")
    assert [m.id for m in client.models.list()] == ["scripted-model"]


def test_openai_client_stream_text_and_tool_calls(llm, url):
    llm.reply("streamed words arrive one by one")
    llm.tool_calls([("get_weather", {"city": "Paris"}), ("lookup", {"q": "a long query text"})])
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
    messages = [{"role": "user", "content": "hi"}]

    text_chunks = list(
        client.chat.completions.create(
            model="m", messages=messages, stream=True, stream_options={"include_usage": True}
        )
    )
    tool_chunks = list(client.chat.completions.create(model="m", messages=messages, stream=True))

    text = "".join(c.choices[0].delta.content or "" for c in text_chunks if c.choices)
    assert text == "streamed words arrive one by one"
    assert text_chunks[-1].usage.completion_tokens > 0
    assert [c.choices[0].finish_reason for c in text_chunks if c.choices][-1] == "stop"
    calls: dict[int, dict] = {}
    for chunk in tool_chunks:
        for delta in chunk.choices[0].delta.tool_calls or []:
            call = calls.setdefault(delta.index, {"id": None, "name": "", "arguments": ""})
            call["id"] = call["id"] or delta.id
            call["name"] += delta.function.name or ""
            call["arguments"] += delta.function.arguments or ""
    assert [c["name"] for c in calls.values()] == ["get_weather", "lookup"]
    assert json.loads(calls[1]["arguments"]) == {"q": "a long query text"}
    assert calls[0]["id"] != calls[1]["id"]
    assert tool_chunks[-1].choices[0].finish_reason == "tool_calls"


def test_litellm_stream_rebuilds_tool_call(llm, url):
    llm.tool_call("get_weather", {"city": "Quito"})

    chunks = list(complete(url, tools=[WEATHER_TOOL], stream=True))
    rebuilt = litellm.stream_chunk_builder(chunks)

    call = rebuilt.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Quito"}


def test_hang_times_out_the_client_then_script_continues(llm, url):
    # The hang outlasts the second request's own timeout: had the fake waited it out instead of
    # seeing the client leave, the second request would time out and fail the test.
    llm.hang(3600).reply("back")

    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{url}/v1/chat/completions", json={"messages": []}, timeout=0.3)
    answer = httpx.post(f"{url}/v1/chat/completions", json={"messages": []}, timeout=120)

    assert answer.json()["choices"][0]["message"]["content"] == "back"


def test_reply_delay(llm, url):
    llm.reply("slow", delay=0.3)

    started = time.monotonic()
    response = httpx.post(f"{url}/v1/chat/completions", json={"messages": []})

    assert response.json()["choices"][0]["message"]["content"] == "slow"
    assert time.monotonic() - started >= 0.3


@pytest.mark.parametrize("stream", [False, True])
def test_a_stalled_answer_starts_then_times_the_client_out(llm, url, stream):
    # The stall outlasts any run of the test: only the client's own timeout can end the call.
    llm.stall(3600).reply("after the stall")
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0, timeout=1.0)
    # the SDK wraps a timeout before the answer began; mid-stream, httpx's own escapes
    with pytest.raises((openai.APITimeoutError, httpx.ReadTimeout)):
        answer = client.chat.completions.create(
            model="scripted-model", messages=[{"role": "user", "content": "hi"}], stream=stream)
        if stream:
            for _ in answer:  # the first chunks arrive, then nothing
                pass
    again = client.with_options(timeout=120).chat.completions.create(
        model="scripted-model", messages=[{"role": "user", "content": "hi"}])
    assert again.choices[0].message.content == "after the stall"
