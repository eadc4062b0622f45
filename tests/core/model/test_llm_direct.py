"""The direct client (an OpenAI-compatible server at ``api_base`` without litellm) against the
scripted server over real HTTP, side by side with litellm on the same script: the same answers,
usage, prices, errors and retries, so choosing it changes nothing but the import."""

import asyncio
import sys

import pytest

from core.errors import ProviderError
from core.messages import Message
from core.model.direct import DirectModel, wire_name
from core.model.llm import LiteLLMModel, ToolSpec, uses_direct
from core.model.streaming import streaming_to
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve

USER = Message(role="user", content="hi")
CLOCK = ToolSpec(name="clock", description="time", parameters={"type": "object"})
CLIENTS = {"direct": DirectModel, "litellm": LiteLLMModel}


@pytest.fixture
def server():
    llm = ScriptedLLM(models=("scripted-model", "gpt-4o-mini"))
    with serve(llm.app) as running:
        yield llm, f"{running.url}/v1"


def model(client, base, name="openai/scripted-model", **kw):
    kw.setdefault("retries", 0)
    return CLIENTS[client](name, api_base=base, api_key="sk-test", **kw)


class Sink:
    def __init__(self):
        self.parts = []
        self.resets = 0

    def text(self, delta):
        self.parts.append(delta)

    def reset(self):
        self.resets += 1
        self.parts.clear()


def test_which_models_the_direct_client_takes():
    base = "http://127.0.0.1:8080/v1"
    assert uses_direct("openai/qwen2.5", base) and uses_direct("local-model", base)
    assert not uses_direct("openai/gpt-4o-mini", None)  # OpenAI itself: litellm
    assert not uses_direct("anthropic/claude-sonnet-4", base)
    assert not uses_direct("openai/qwen2.5", base, "litellm")
    assert wire_name("openai/qwen2.5") == "qwen2.5" and wire_name("local") == "local"


@pytest.mark.parametrize("client", CLIENTS)
def test_text_answer_usage_and_the_request_sent(server, client):
    llm, base = server
    llm.reply("hello there")
    response = asyncio.run(model(client, base, max_tokens=50, temperature=0.2).complete([USER]))
    assert response.message.content == "hello there"
    assert response.finish_reason == "stop"
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    sent = llm.requests[-1]
    assert sent["model"] == "scripted-model"
    assert (sent["max_tokens"], sent["temperature"]) == (50, 0.2)
    assert sent["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("client", CLIENTS)
def test_tool_calls_unstreamed_and_streamed(server, client):
    llm, base = server
    llm.tool_call("clock", {"tz": "UTC"}).tool_call("clock", {"tz": "CET"}, text="checking")
    first = asyncio.run(model(client, base).complete([USER], [CLOCK]))
    assert [(c.name, c.parsed_arguments()) for c in first.message.tool_calls] == [
        ("clock", {"tz": "UTC"})]
    assert llm.requests[-1]["tools"][0]["function"]["name"] == "clock"
    sink = Sink()

    async def streamed():
        with streaming_to(sink):
            return await model(client, base).complete([USER], [CLOCK])

    second = asyncio.run(streamed())
    assert [(c.name, c.parsed_arguments()) for c in second.message.tool_calls] == [
        ("clock", {"tz": "CET"})]
    assert llm.requests[-1]["stream"] is True
    assert second.usage.prompt_tokens > 0


@pytest.mark.parametrize("client", CLIENTS)
def test_streamed_text_reaches_the_sink_and_equals_the_answer(server, client):
    llm, base = server
    llm.reply("one two three four")
    sink = Sink()

    async def streamed():
        with streaming_to(sink):
            return await model(client, base).complete([USER])

    response = asyncio.run(streamed())
    assert "".join(sink.parts) == response.message.content == "one two three four"
    assert llm.requests[-1]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("client", CLIENTS)
def test_a_known_model_is_priced_as_litellm_prices_it(server, client):
    llm, base = server
    llm.reply("priced")
    response = asyncio.run(model(client, base, name="openai/gpt-4o-mini").complete([USER]))
    usage = response.usage
    expected = usage.prompt_tokens * 1.5e-07 + usage.completion_tokens * 6e-07  # the table's
    assert usage.cost_usd == pytest.approx(expected, rel=1e-6)


def test_an_unknown_model_has_no_price_unless_it_is_free(server):
    llm, base = server
    llm.reply("a").reply("b")
    assert asyncio.run(model("direct", base).complete([USER])).usage.cost_usd is None
    free = model("direct", base, free=True)
    assert asyncio.run(free.complete([USER])).usage.cost_usd == 0.0


ERRORS = [(401, "auth", False), (404, "not_found", False), (400, "context_window", False),
          (429, "rate_limit", True), (503, "unavailable", True), (500, "unavailable", True)]


# litellm 1.106 maps OpenAI's 403 to a BadRequestError; the direct client calls it what it is.
@pytest.mark.parametrize(("client", "status", "kind", "retryable"), [
    *[(client, *case) for client in CLIENTS for case in ERRORS],
    ("direct", 403, "auth", False),
    ("direct", 408, "timeout", True),  # OpenRouter's "your request timed out"
])
def test_errors_are_classified_alike(server, client, status, kind, retryable):
    llm, base = server
    llm.fail(status)
    with pytest.raises(ProviderError) as caught:
        asyncio.run(model(client, base).complete([USER]))
    assert (caught.value.kind, caught.value.retryable) == (kind, retryable)
    assert "litellm" not in str(caught.value) and "Exception" not in str(caught.value)


def test_an_ordinary_bad_request_is_not_taken_for_a_full_context(server):
    llm, base = server
    llm.fail(400, {"error": {"message": "tools[0] is invalid", "type": "invalid_request_error",
                             "param": "tools", "code": None}})
    with pytest.raises(ProviderError) as caught:
        asyncio.run(model("direct", base).complete([USER]))
    assert (caught.value.kind, str(caught.value)) == ("bad_request", "tools[0] is invalid")


@pytest.mark.parametrize("client", CLIENTS)
def test_retryable_failures_are_retried_with_the_servers_retry_after(server, client):
    llm, base = server
    llm.fail(429, headers={"retry-after": "0"}).fail(503, headers={"retry-after": "0"})
    llm.reply("third time")
    response = asyncio.run(model(client, base, retries=2).complete([USER]))
    assert response.message.content == "third time"
    assert len(llm.requests) == 3


def test_a_stalled_stream_is_a_retryable_timeout_and_the_sink_is_reset(server):
    llm, base = server
    llm.stall(3600)
    sink = Sink()

    async def streamed():
        with streaming_to(sink):
            return await model("direct", base, timeout=1.0).complete([USER])

    with pytest.raises(ProviderError) as caught:
        asyncio.run(streamed())
    assert (caught.value.kind, caught.value.retryable) == ("timeout", True)
    assert sink.parts == []


def test_an_unreachable_server_is_unavailable():
    dead = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    with pytest.raises(ProviderError) as caught:
        asyncio.run(model("direct", dead).complete([USER]))
    assert (caught.value.kind, caught.value.retryable) == ("unavailable", True)


def test_the_key_falls_back_to_openai_api_key_as_litellm_does(server, monkeypatch):
    llm, _ = server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    seen = []
    llm.handler = lambda body: "ok"
    original = llm.app

    async def app(scope, receive, send):
        if scope["type"] == "http":
            seen.append(dict(scope["headers"]).get(b"authorization"))
        await original(scope, receive, send)

    with serve(app) as running:
        url = f"{running.url}/v1"
        asyncio.run(DirectModel("openai/scripted-model", api_base=url, retries=0).complete([USER]))
        asyncio.run(DirectModel("openai/scripted-model", api_base=url, api_key="sk-own",
                                retries=0).complete([USER]))
    assert seen == [b"Bearer sk-from-env", b"Bearer sk-own"]


def test_a_turn_through_the_direct_client_never_imports_litellm(tmp_path):
    import subprocess

    code = (
        "import asyncio, sys\n"
        "from core.model.direct import DirectModel\n"
        "from core.messages import Message\n"
        "from iris_testing.llm_server import ScriptedLLM\n"
        "from iris_testing.server import serve\n"
        "llm = ScriptedLLM(); llm.reply('fine')\n"
        "with serve(llm.app) as s:\n"
        "    m = DirectModel('openai/scripted-model', api_base=s.url + '/v1', retries=0)\n"
        "    r = asyncio.run(m.complete([Message(role='user', content='hi')]))\n"
        "    w = m.known_window()\n"
        "print(r.message.content, 'litellm' in sys.modules, 'openai' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path, env=_env())
    assert out.stdout.split() == ["fine", "False", "False"]


def _env():
    import os
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[3])
    return {**os.environ, "PYTHONPATH": root}


pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
