"""The embedded model's OpenAI-compatible server: ``/v1/models`` and ``/v1/chat/completions``
(whole or streamed), on loopback, one generation at a time.

Run as ``python -m local_dev.model_server --model FILE.gguf --port N``; ``local_model`` starts
it as a child of ``iris dev``. Chat messages are rendered in the model's own format (ChatML, as
SmolLM2's template writes it), text as it is: no HTML escaping.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import queue
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field, ValidationError

from local_dev.engines import Counts, Engine, Sampling

MAX_BODY_BYTES = 4 << 20
CHAT_STOPS = ("<|im_end|>", "<|im_start|>", "<|endoftext|>")
DEFAULT_SYSTEM = "You are a helpful AI assistant."


class Message(BaseModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    messages: list[Message] = Field(min_length=1, max_length=4096)
    model: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    stop: str | list[str] | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None


def text_of(content: str | list[dict[str, Any]] | None) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return "".join(str(part.get("text", "")) for part in content if part.get("type") == "text")


def render_chatml(messages: Iterable[Message]) -> list[str]:
    """Every message as ``<|im_start|>role\\ntext<|im_end|>``, a system turn first (the
    template's default when the request has none), then the assistant's turn opened: the
    prompt as its turns, which the engine may partly have read already."""
    turns = [(("system" if m.role == "developer" else m.role), text_of(m.content))
             for m in messages]
    if not turns or turns[0][0] != "system":
        turns.insert(0, ("system", DEFAULT_SYSTEM))
    return [*(f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in turns),
            "<|im_start|>assistant\n"]


class StopScanner:
    """Passes text through until a stop string; holds back a tail that may begin one."""

    def __init__(self, stops: Iterable[str]) -> None:
        self.stops = tuple(s for s in stops if s)
        self.held = ""
        self.stopped = False

    def feed(self, piece: str) -> str:
        if self.stopped:
            return ""
        text = self.held + piece
        cut = min((i for i in (text.find(s) for s in self.stops) if i >= 0), default=-1)
        if cut >= 0:
            self.held, self.stopped = "", True
            return text[:cut]
        keep = max((n for s in self.stops for n in range(1, len(s)) if text.endswith(s[:n])),
                   default=0)
        self.held = text[len(text) - keep:] if keep else ""
        return text[:len(text) - keep]

    def flush(self) -> str:
        held, self.held = self.held, ""
        return "" if self.stopped else held


class Generation:
    """One generation on a worker thread; its pieces arrive on a queue, it stops when the
    reader cancels (a client that went away)."""

    def __init__(self, engine: Engine, lock: threading.Lock, prompt: list[str], sampling: Sampling,
                 stops: Iterable[str]) -> None:
        self.pieces: queue.Queue[str | None] = queue.Queue()
        self.cancelled = threading.Event()
        self.scanner = StopScanner(stops)
        self.counts = Counts(0, 0)
        self.error: BaseException | None = None
        self._args = (engine, lock, prompt, sampling)
        threading.Thread(target=self._run, name="generation", daemon=True).start()

    def _on_piece(self, piece: str) -> bool:
        if self.cancelled.is_set():
            return False
        if text := self.scanner.feed(piece):
            self.pieces.put(text)
        return not self.scanner.stopped

    def _run(self) -> None:
        engine, lock, prompt, sampling = self._args
        try:
            with lock:
                self.counts = engine.generate(prompt, sampling, self._on_piece)
            if tail := self.scanner.flush():
                self.pieces.put(tail)
        except BaseException as exc:  # reported to the reader, not lost in a thread
            self.error = exc
        finally:
            self.pieces.put(None)

    def finish_reason(self, max_tokens: int) -> str:
        stopped = self.scanner.stopped or self.counts.completion_tokens < max_tokens
        return "stop" if stopped else "length"

    async def stream(self) -> AsyncIterator[str]:
        while True:
            piece = await asyncio.to_thread(self.pieces.get)
            if piece is None:
                break
            yield piece
        if self.error is not None:
            raise RuntimeError(f"the engine failed: {self.error}") from self.error


def build_app(engine: Engine, alias: str, context: int) -> FastAPI:
    app = FastAPI(title="Iris embedded model", docs_url=None, redoc_url=None)
    lock = threading.Lock()

    def usage(counts: Counts) -> dict[str, int]:
        return {"prompt_tokens": counts.prompt_tokens,
                "completion_tokens": counts.completion_tokens,
                "total_tokens": counts.prompt_tokens + counts.completion_tokens}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": alias, "object": "model", "owned_by": "iris"}]}

    @app.post("/v1/chat/completions", response_model=None)
    async def chat(request: Request) -> Any:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                return JSONResponse({"error": {"message": "request body too large"}}, 413)
        try:
            req = ChatRequest.model_validate_json(body)
        except ValidationError as exc:
            return JSONResponse({"error": {"message": str(exc)}}, 400)
        max_tokens = min(req.max_completion_tokens or req.max_tokens or 512, context)
        sampling = Sampling(max_tokens=max_tokens,
                            temperature=0.7 if req.temperature is None else req.temperature,
                            top_p=req.top_p or 0.95)
        stops = [*CHAT_STOPS, *([req.stop] if isinstance(req.stop, str) else req.stop or [])]
        generation = Generation(engine, lock, render_chatml(req.messages), sampling, stops)
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        head = {"id": ident, "created": created, "model": alias}
        if not req.stream:
            try:
                text = "".join([piece async for piece in generation.stream()])
            except RuntimeError as exc:
                return JSONResponse({"error": {"message": str(exc)}}, 500)
            finally:
                generation.cancelled.set()
            return {**head, "object": "chat.completion", "choices": [{
                "index": 0, "message": {"role": "assistant", "content": text},
                "finish_reason": generation.finish_reason(max_tokens)}],
                "usage": usage(generation.counts)}

        def event(choices: list[dict[str, Any]], **extra: Any) -> str:
            return "data: " + json.dumps({**head, "object": "chat.completion.chunk",
                                          "choices": choices, **extra}) + "\n\n"

        async def events() -> AsyncIterator[str]:
            try:
                yield event([{"index": 0, "delta": {"role": "assistant", "content": ""},
                              "finish_reason": None}])
                async for piece in generation.stream():
                    yield event([{"index": 0, "delta": {"content": piece},
                                  "finish_reason": None}])
                yield event([{"index": 0, "delta": {},
                              "finish_reason": generation.finish_reason(max_tokens)}])
                if (req.stream_options or {}).get("include_usage"):
                    yield event([], usage=usage(generation.counts))
                yield "data: [DONE]\n\n"
            finally:
                generation.cancelled.set()  # the client went away: stop generating

        return StreamingResponse(events(), media_type="text/event-stream")

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m local_dev.model_server")
    parser.add_argument("--model", type=Path, required=True, help="the .gguf file")
    parser.add_argument("--alias", default="local-model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cache", type=Path, required=True,
                        help="where a load-ready copy of the model may be written")
    args = parser.parse_args(argv)

    import uvicorn

    from local_dev import engines

    engine = engines.load(args.model, threads=args.threads, context=args.context,
                          cache=args.cache)
    print(f"engine {engine.name}, model {args.model.name}, context {args.context}, "
          f"threads {args.threads}", flush=True)
    uvicorn.run(build_app(engine, args.alias, args.context), host=args.host, port=args.port,
                log_level="warning")


if __name__ == "__main__":
    main()
