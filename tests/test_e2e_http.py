"""End to end over real HTTP: the official openai client → the emulator (uvicorn) → litellm →
a scripted OpenAI-compatible model server, with a real tool call in between."""

import openai
import pytest

from iris_testing.llm_server import ScriptedLLM
from tests.fakes.stack import emulator_stack


@pytest.fixture
def llm():
    return ScriptedLLM()


@pytest.fixture
def stack(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch, IRIS_MODEL_RETRIES=1) as running:
        yield running.client, running.runtime


def ask(client, text, **kwargs):
    return client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user="alice", **kwargs
    )


def test_tool_call_turn_end_to_end(stack, llm):
    client, rt = stack
    llm.tool_call("clock", {"timezone": "Asia/Tokyo"}).reply("It is morning in Tokyo.")
    key = {"Idempotency-Key": "turn-1"}
    answer = ask(client, "What time is it in Tokyo?", extra_headers=key)
    assert answer.choices[0].message.content == "It is morning in Tokyo."

    first, second = llm.requests
    assert first["messages"][0]["role"] == "system"
    assert {t["function"]["name"] for t in first["tools"]} >= {"clock", "load_tools"}
    tool_result = second["messages"][-1]
    assert tool_result["role"] == "tool" and "Asia/Tokyo" in tool_result["content"]

    user = rt.store.users.resolve("http:alice")
    stored = rt.store.messages.for_session(user, rt.store.sessions.list(user)[0].id)
    assert [m.message.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[1].message.tool_calls[0].name == "clock"
    usage = rt.store.usage.totals(user)
    assert usage.calls == 2 and usage.prompt_tokens > 0

    again = ask(client, "What time is it in Tokyo?", extra_headers=key)
    assert again.id == answer.id
    assert again.choices[0].message.content == answer.choices[0].message.content
    assert len(llm.requests) == 2
    assert rt.store.db.scalar("SELECT count(*) FROM inbox") == 1


def test_streaming_end_to_end(stack, llm):
    client, _ = stack
    llm.reply("Streaming works.")
    stream = ask(client, "stream please", stream=True)
    assert "".join(chunk.choices[0].delta.content or "" for chunk in stream) == "Streaming works."


def test_transient_provider_errors_are_retried(stack, llm):
    client, _ = stack
    llm.fail(500).reply("after a retry")
    assert ask(client, "hi").choices[0].message.content == "after a retry"
    assert len(llm.requests) == 2


def test_provider_auth_failure_is_a_clear_error(stack, llm):
    client, rt = stack
    llm.fail(401)
    with pytest.raises(openai.APIStatusError) as caught:
        ask(client, "hi")
    assert caught.value.status_code == 502
    assert "rejected the API key" in caught.value.message
    assert len(llm.requests) == 1  # auth errors are not retried
    user = rt.store.users.resolve("http:alice")
    assert rt.store.db.scalar(
        "SELECT status FROM inbox WHERE user_id = ?", (user,)) == "failed"


def test_rate_limit_exhausting_retries_is_503(stack, llm):
    client, _ = stack
    llm.fail(429, headers={"Retry-After": "0"}, times=2)
    with pytest.raises(openai.APIStatusError) as caught:
        ask(client, "hi")
    assert caught.value.status_code == 503
    assert len(llm.requests) == 2


@pytest.mark.parametrize(("free", "shown"), [("true", "cost 0 (local model)"),
                                             ("false", "cost unknown")])
def test_usage_of_a_model_running_here_costs_nothing(llm, monkeypatch, free, shown):
    with emulator_stack(llm, monkeypatch, IRIS_MODEL_FREE=free) as running:
        llm.reply("hello")
        ask(running.client, "hi")
        usage = ask(running.client, "/usage").choices[0].message.content
    assert f"completion tokens, {shown}" in usage
