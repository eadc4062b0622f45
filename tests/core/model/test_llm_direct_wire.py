"""The direct client reading what servers really send (not only the scripted server's tidy
output): server-sent events as the WHATWG spec allows them (CRLF, comments, ``event:`` lines,
``data:`` without its space, a JSON chunk over two ``data:`` lines), an ``{"error": …}`` event in
the middle of a stream (OpenRouter's way, which the OpenAI SDK raises as an APIError), and answers
that are not JSON or are too large, over real HTTP."""

import asyncio
import json

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from core.errors import ProviderError
from core.messages import Message
from core.model import direct as llm_direct
from core.model.direct import DirectModel
from core.model.streaming import streaming_to
from iris_testing.server import serve

USER = Message(role="user", content="hi")


def chunk(content=None, finish=None, usage=None):
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {} if content is None else {"content": content},
                         "finish_reason": finish}]}
    if usage:
        body["choices"] = []
        body["usage"] = usage
    return json.dumps(body)


class Wire:
    """A chat-completions endpoint answering with whatever bytes a test gives it."""

    def __init__(self):
        self.stream: list[bytes] = []
        self.body = b""
        self.content_type = "application/json"
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    async def _chat(self, request: Request) -> Response:
        sent = await request.json()
        if sent.get("stream"):
            async def parts():
                for part in self.stream:
                    yield part
            return StreamingResponse(parts(), media_type="text/event-stream")
        return Response(self.body, media_type=self.content_type)


class Sink:
    def __init__(self):
        self.parts = []

    def text(self, delta):
        self.parts.append(delta)

    def reset(self):
        self.parts.clear()


@pytest.fixture
def wire():
    found = Wire()
    with serve(found.app) as server:
        yield found, DirectModel("openai/m", api_base=f"{server.url}/v1", retries=0)


def streamed(model, sink=None):
    sink = sink or Sink()

    async def run():
        with streaming_to(sink):
            return await model.complete([USER])

    return asyncio.run(run()), sink


def test_events_as_the_spec_allows_them(wire):
    server, model = wire
    first, second = chunk("Hel"), chunk("lo")
    split = chunk(" world")
    cut = split.index(", ") + 2  # between two members: a newline there is still valid JSON
    server.stream = [
        b": keep-alive comment\r\n\r\n",
        f"event: message\r\ndata: {first}\r\n\r\n".encode(),
        f"data:{second}\n\n".encode(),  # no space after the colon
        # one JSON chunk over two data lines: joined with a newline, still the same JSON
        f"data: {split[:cut]}\ndata: {split[cut:]}\n\n".encode(),
        f"data: {chunk(finish='stop')}\n\n".encode(),
        f"data: {chunk(usage={'prompt_tokens': 5, 'completion_tokens': 3})}\n\n".encode(),
        b"data: [DONE]\n\n",
        b"data: {\"never\": \"read\"}\n\n",
    ]
    response, sink = streamed(model)
    assert response.message.content == "".join(sink.parts) == "Hello world"
    assert response.finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (5, 3)


def test_an_error_event_mid_stream_is_a_provider_error_and_resets_what_was_shown(wire):
    server, model = wire
    server.stream = [
        f"data: {chunk('partial ')}\n\n".encode(),
        b'data: {"error": {"message": "Upstream overloaded", "code": 502}}\n\n',
    ]
    sink = Sink()
    with pytest.raises(ProviderError) as caught:
        streamed(model, sink)
    assert (caught.value.kind, caught.value.retryable) == ("unavailable", True)
    assert sink.parts == []  # "partial " was shown, then taken back
    assert str(caught.value) == "Upstream overloaded"


def test_vllms_error_event_is_a_provider_error_too(wire):
    server, model = wire
    server.stream = [b'data: {"object": "error", "message": "The model is overloaded", '
                     b'"type": "ServiceUnavailableError", "param": null, "code": 503}\n\n']
    with pytest.raises(ProviderError) as caught:
        streamed(model)
    assert (caught.value.kind, caught.value.retryable) == ("unavailable", True)
    assert str(caught.value) == "The model is overloaded"


def test_a_stream_that_ends_without_done_keeps_what_came(wire):
    server, model = wire
    server.stream = [f"data: {chunk('all of it', finish='stop')}\n\n".encode()]
    response, _ = streamed(model)
    assert response.message.content == "all of it"


@pytest.mark.parametrize("body", [b"<html>Bad gateway</html>", b"[1, 2]", b'{"choices": []}'])
def test_an_answer_that_is_not_a_completion_is_refused_plainly(wire, body):
    server, model = wire
    server.body = body
    with pytest.raises(ProviderError) as caught:
        asyncio.run(model.complete([USER]))
    assert caught.value.kind == "unavailable"
    assert "model server's answer" in str(caught.value)


def test_an_answer_larger_than_the_cap_is_refused(wire, monkeypatch):
    server, model = wire
    monkeypatch.setattr(llm_direct, "MAX_ANSWER_BYTES", 4096)
    server.body = json.dumps({"choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "x" * 10_000}}]}).encode()
    with pytest.raises(ProviderError) as caught:
        asyncio.run(model.complete([USER]))
    assert "larger than" in str(caught.value)
    server.stream = [f"data: {chunk('y' * 10_000)}\n\n".encode()]
    with pytest.raises(ProviderError) as caught:
        streamed(model)
    assert "larger than" in str(caught.value)
