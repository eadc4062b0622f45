"""A scripted OpenAI-compatible chat completions server for end-to-end tests.

Script the answers, serve ``llm.app`` with ``iris_testing.server.serve`` and point litellm
(``model="openai/x", api_base=f"{url}/v1", api_key="x"``) or the ``openai`` client at it::

    llm = ScriptedLLM()
    llm.tool_call("memory", {"action": "add", "text": "likes tea"}).reply("Noted.")
    with serve(llm.app) as server:
        ...
    assert llm.requests[1]["messages"][-1]["role"] == "tool"
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from iris_testing.llm_audio import Transcriptions
from iris_testing.openai_errors import error_body


class Gate:
    """Holds a streamed answer's server-sent events until the test lets them through, so a
    test can look at a half-sent answer: ``allow(n)`` lets ``n`` more events go (the first is
    the role chunk, then one per word), ``open()`` all of them. Thread-safe."""

    def __init__(self, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self._changed = threading.Condition()
        self._allowed = 0
        self._sent = 0
        self._open = False

    def allow(self, events: int = 1) -> None:
        with self._changed:
            self._allowed += events
            self._changed.notify_all()

    def open(self) -> None:
        with self._changed:
            self._open = True
            self._changed.notify_all()

    @property
    def sent(self) -> int:
        with self._changed:
            return self._sent

    def wait_sent(self, events: int, timeout: float = 60.0) -> bool:
        """Until the server has sent ``events`` events (True) or ``timeout`` passed."""
        with self._changed:
            return self._changed.wait_for(lambda: self._sent >= events, timeout)

    def pass_one(self) -> bool:
        """Server side (blocking: run it in a thread): wait for leave to send one more event."""
        with self._changed:
            allowed = self._changed.wait_for(
                lambda: self._open or self._sent < self._allowed, self.timeout)
            if allowed:
                self._sent += 1
                self._changed.notify_all()
            return allowed


@dataclass(frozen=True)
class Reply:
    text: str
    finish_reason: str = "stop"
    delay: float = 0.0
    gate: Gate | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True)
class ToolCalls:
    calls: tuple[ToolCall, ...]
    text: str | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class Failure:
    status: int
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] | None = None


@dataclass(frozen=True)
class Hang:
    """Hold the request for ``seconds`` (or until the client gives up), then answer 504."""

    seconds: float


@dataclass(frozen=True)
class Stall:
    """Answer 200 and send the first part of the answer (a few SSE chunks when streaming, half
    the JSON otherwise), then send nothing more for ``seconds`` or until the client gives up."""

    text: str = "a reply that never finishes"
    seconds: float = 60.0


@dataclass(frozen=True)
class RawCompletion:
    """A complete ``chat.completion`` object, served as it is."""

    body: dict[str, Any]


Step = Reply | ToolCalls | Failure | Hang | Stall | RawCompletion
Handler = Callable[[dict[str, Any]], "dict[str, Any] | str | Step"]

def estimate_tokens(value: object) -> int:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return max(1, len(text) // 4)


class ScriptedLLM:
    """Answers chat completions from a queue of scripted steps, then from ``handler``.

    ``handler(request_json)`` may return a str (text answer), an assistant message dict
    (``content`` and/or ``tool_calls``, either OpenAI-shaped or ``{"name", "arguments"}``), a
    full ``chat.completion`` dict, or a step (``Reply``, ``ToolCalls``, ``Failure``, ``Hang``).
    With neither a queued step nor a handler the request gets a 500 saying the script ran out.
    """

    def __init__(self, models: Sequence[str] = ("scripted-model",)) -> None:
        self.models = list(models)
        self.handler: Handler | None = None
        self._lock = threading.Lock()
        self._queue: deque[Step] = deque()
        self._requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self.transcriptions = Transcriptions()  # script it: .text, .seconds, .fail(status)
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/models", self._models, methods=["GET"]),
                Route("/v1/audio/speech", self._speech, methods=["POST"]),
                Route("/v1/audio/transcriptions", self.transcriptions.answer, methods=["POST"]),
            ]
        )
        # /v1/audio/speech: the audio it answers with (OGG bytes), or an HTTP error status
        self.speech_audio = b"OggS\x00\x02scripted-speech"
        self.speech_status = 200
        self.speech_requests: list[dict[str, Any]] = []

    # scripting

    def enqueue(self, step: Step) -> Self:
        with self._lock:
            self._queue.append(step)
        return self

    def reply(self, text: str, *, finish_reason: str = "stop", delay: float = 0.0,
              gate: Gate | None = None) -> Self:
        """Answer ``text``; with ``gate``, a streamed answer's events wait for the gate."""
        return self.enqueue(Reply(text, finish_reason=finish_reason, delay=delay, gate=gate))

    def tool_call(
        self,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        call_id: str | None = None,
        *,
        text: str | None = None,
        delay: float = 0.0,
    ) -> Self:
        call = ToolCall(name, {} if arguments is None else arguments, call_id)
        return self.enqueue(ToolCalls((call,), text=text, delay=delay))

    def tool_calls(
        self,
        calls: Iterable[tuple[str, dict[str, Any] | str] | tuple[str, dict[str, Any] | str, str]],
        *,
        text: str | None = None,
        delay: float = 0.0,
    ) -> Self:
        return self.enqueue(ToolCalls(tuple(ToolCall(*c) for c in calls), text=text, delay=delay))

    def fail(
        self,
        status: int,
        body: dict[str, Any] | str | None = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> Self:
        """Answer HTTP ``status``; a str ``body`` becomes the message of an OpenAI error body."""
        for _ in range(times):
            self.enqueue(Failure(status, body, headers))
        return self

    def stall(self, seconds: float = 60.0, *, times: int = 1) -> Self:
        """Start answering, then stop mid-answer (see ``Stall``)."""
        for _ in range(times):
            self.enqueue(Stall(seconds=seconds))
        return self

    def hang(self, seconds: float) -> Self:
        """Hold one request for ``seconds`` or until the client disconnects, then answer 504."""
        return self.enqueue(Hang(seconds))

    # inspection

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """Scripted steps not consumed yet."""
        with self._lock:
            return len(self._queue)

    # serving

    async def _models(self, request: Request) -> Response:
        data = [
            {"id": name, "object": "model", "created": 1700000000, "owned_by": "scripted"}
            for name in self.models
        ]
        return JSONResponse({"object": "list", "data": data})

    async def _speech(self, request: Request) -> Response:
        """OpenAI's create-speech: JSON in (model, input, voice, response_format), the raw
        audio bytes out."""
        body = await request.json()
        with self._lock:
            self.speech_requests.append(body)
        if self.speech_status != 200:
            return JSONResponse(error_body(self.speech_status), self.speech_status)
        if not body.get("input") or not body.get("voice"):
            return JSONResponse(error_body(400, "input and voice are required"), 400)
        media = {"opus": "audio/ogg", "mp3": "audio/mpeg"}.get(body.get("response_format"),
                                                               "audio/mpeg")
        return Response(self.speech_audio, media_type=media)

    async def _chat(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse(error_body(400, "Request body is not valid JSON."), 400)
        with self._lock:
            self._requests.append(body)
            number = len(self._requests)
            step = self._queue.popleft() if self._queue else None
            handler = self.handler
        if step is None and handler is not None:
            try:
                step = _as_step(handler(body))
            except Exception as exc:
                message = f"ScriptedLLM handler raised {exc!r} on request #{number}"
                return JSONResponse(error_body(500, message), 500)
        if step is None:
            message = (
                f"ScriptedLLM script ran out: request #{number} has no scripted answer "
                f"(last message: {_last_message(body)!r})"
            )
            return JSONResponse(error_body(500, message), 500)
        return await self._answer(request, body, step)

    async def _answer(self, request: Request, body: dict[str, Any], step: Step) -> Response:
        if isinstance(step, Failure):
            return _failure(step)
        if isinstance(step, Hang):
            await _hold(request, step.seconds)
            return JSONResponse(error_body(504, "ScriptedLLM hang ended."), 504)
        if isinstance(step, Stall):
            return _stalled(request, body, self._completion(body, Reply(step.text)), step.seconds)
        if isinstance(step, Reply | ToolCalls) and step.delay:
            await asyncio.sleep(step.delay)
        completion = step.body if isinstance(step, RawCompletion) else self._completion(body, step)
        gate = step.gate if isinstance(step, Reply) else None
        if body.get("stream"):
            chunks = _stream_chunks(completion, include_usage=_include_usage(body))
            if gate is not None:
                return StreamingResponse(_gated(chunks, gate), media_type="text/event-stream")
            return StreamingResponse(chunks, media_type="text/event-stream")
        if gate is not None:
            await asyncio.to_thread(gate.pass_one)
        return JSONResponse(completion)

    def _completion(self, body: dict[str, Any], step: Reply | ToolCalls) -> dict[str, Any]:
        with self._lock:
            number = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if isinstance(step, Reply):
            message["content"] = step.text
            finish_reason = step.finish_reason
        else:
            message["content"] = step.text
            message["tool_calls"] = [self._tool_call(call) for call in step.calls]
            finish_reason = "tool_calls"
        prompt_tokens = estimate_tokens([body.get("messages", []), body.get("tools", [])])
        completion_tokens = estimate_tokens(
            [message["content"] or "", message.get("tool_calls", [])]
        )
        return {
            "id": f"chatcmpl-scripted-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.models[0],
            "system_fingerprint": "fp_scripted",
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _tool_call(self, call: ToolCall) -> dict[str, Any]:
        with self._lock:
            call_id = call.call_id or f"call_scripted_{next(self._ids)}"
        arguments = call.arguments
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
        }


def _as_step(result: object) -> Step | None:
    if result is None or isinstance(result, Reply | ToolCalls | Failure | Hang | Stall |
                                    RawCompletion):
        return result
    if isinstance(result, str):
        return Reply(result)
    if isinstance(result, dict):
        if "choices" in result:
            return RawCompletion(result)
        calls = tuple(_parse_tool_call(call) for call in result.get("tool_calls") or ())
        if calls:
            return ToolCalls(calls, text=result.get("content"))
        return Reply(result.get("content") or "", finish_reason=result.get("finish_reason", "stop"))
    raise TypeError(f"handler returned {type(result).__name__}, expected dict, str or a step")


def _parse_tool_call(call: dict[str, Any]) -> ToolCall:
    if "function" in call:
        function = call["function"]
        return ToolCall(function["name"], function.get("arguments", {}), call.get("id"))
    return ToolCall(call["name"], call.get("arguments", {}), call.get("id"))


async def _gated(chunks: Iterator[str], gate: Gate) -> Any:
    for chunk in chunks:
        if not await asyncio.to_thread(gate.pass_one):
            return  # the test never opened the gate: the answer breaks off
        yield chunk


def _failure(step: Failure) -> Response:
    body = step.body if isinstance(step.body, dict) else error_body(step.status, step.body)
    headers = dict(step.headers or {})
    if step.status == 429 and not any(k.lower() == "retry-after" for k in headers):
        headers["Retry-After"] = "1"
    return JSONResponse(body, step.status, headers=headers)


def _stalled(request: Request, body: dict[str, Any], completion: dict[str, Any],
             seconds: float) -> StreamingResponse:
    if body.get("stream"):
        first = list(_stream_chunks(completion, include_usage=False))[:3]
        media = "text/event-stream"
    else:
        text = json.dumps(completion)
        first = [text[: len(text) // 2]]
        media = "application/json"

    async def parts() -> Any:
        for part in first:
            yield part
        await _hold(request, seconds)

    return StreamingResponse(parts(), media_type=media)


async def _hold(request: Request, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await request.is_disconnected():
            return
        await asyncio.sleep(0.05)


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options") or {}
    return bool(options.get("include_usage"))


def _last_message(body: dict[str, Any]) -> object:
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content")
    return content[:200] if isinstance(content, str) else content


def _stream_chunks(completion: dict[str, Any], *, include_usage: bool) -> Iterator[str]:
    choice = completion["choices"][0]
    message = choice["message"]
    base: dict[str, Any] = {
        key: completion[key] for key in ("id", "created", "model") if key in completion
    }
    base["object"] = "chat.completion.chunk"
    base["system_fingerprint"] = completion.get("system_fingerprint")

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        data = {
            **base,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }
        if include_usage:  # OpenAI sends "usage": null on every chunk but the last
            data["usage"] = None
        return f"data: {json.dumps(data)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for piece in re.findall(r"\S+\s*|\s+", message.get("content") or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": function["name"], "arguments": ""},
                    }
                ]
            }
        )
        arguments = function.get("arguments") or ""
        for start in range(0, len(arguments), 16):
            fragment = arguments[start : start + 16]
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
    yield chunk({}, choice.get("finish_reason") or "stop")
    if include_usage and "usage" in completion:
        yield f"data: {json.dumps({**base, 'choices': [], 'usage': completion['usage']})}\n\n"
    yield "data: [DONE]\n\n"
