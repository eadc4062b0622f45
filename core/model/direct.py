"""The direct client: ``openai/<name>`` on an OpenAI-compatible server at ``IRIS_MODEL_API_BASE``
(the embedded demo model, vLLM, llama.cpp, Ollama's /v1, LM Studio, a proxy), called over HTTP
with httpx instead of through litellm.

For such a server litellm adds nothing but its import (seconds, ~130 MiB per process): it sends
the same ``POST {api_base}/chat/completions``. What litellm would know about the model (context
window, vision, price) comes from its model table without importing it (``core/model/table.py``).
Wire format: OpenAI's Chat Completions API; streaming is server-sent events, ``data: {chunk}``
lines ended by ``data: [DONE]``; errors are ``{"error": {"message", "type", "code"}}`` with the
HTTP status, or an ``{"error": …}`` event in the middle of a stream.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from core.lanes import blocking
from core.model import table as model_table
from core.model.llm import ChatModel
from core.tls import tls_client

MAX_ANSWER_BYTES = 32 << 20  # a completion (or a whole stream) larger than this is refused


def wire_name(name: str) -> str:
    """The model name the server is sent: litellm's provider prefix removed."""
    return name.split("/", 1)[1] if name.startswith("openai/") else name


class ModelHTTPError(Exception):
    """The model server answered an error: ``status_code`` and ``code`` as it sent them, the
    response for its headers (``Retry-After``)."""

    def __init__(self, status: int, message: str, *, code: Any = None,
                 response: httpx.Response | None = None):
        super().__init__(message)
        self.status_code = status
        self.code = code
        self.response = response


class _Fields(dict[str, Any]):
    """A decoded JSON object whose keys read as attributes too (None when absent), the shape
    the turn reads litellm's and the OpenAI SDK's objects in."""

    def __getattr__(self, name: str) -> Any:
        return self.get(name)


def _decode(data: bytes | str) -> Any:
    return json.loads(data, object_hook=_Fields)


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary())
_clients_lock = threading.Lock()


def _client() -> httpx.AsyncClient:
    """This event loop's client: connections are kept between calls, and belong to one loop."""
    loop = asyncio.get_running_loop()
    with _clients_lock:
        found = _clients.get(loop)
        if found is None or found.is_closed:
            found = tls_client(
                follow_redirects=False,
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=32))
            _clients[loop] = found
        return found


async def _read_upto(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    """The body, read until it ends or passes ``cap`` bytes; and whether it passed."""
    raw = bytearray()
    async for piece in response.aiter_bytes():
        raw += piece
        if len(raw) > cap:
            return bytes(raw), True
    return bytes(raw), False


async def _failure(response: httpx.Response) -> ModelHTTPError:
    raw, _ = await _read_upto(response, 64 << 10)
    message, code = "", None
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = str(error.get("message") or error.get("detail") or "")
            code = error.get("code")
        elif isinstance(error, str):
            message = error
    if not message:
        message = raw.decode("utf-8", "replace").strip()[:300] or f"HTTP {response.status_code}"
    return ModelHTTPError(response.status_code, message, code=code, response=response)


def _is_error(chunk: dict[str, Any]) -> bool:
    """OpenAI's (and OpenRouter's, SGLang's) ``{"error": {…}}``, or vLLM's ``{"object":
    "error", "message": …, "code": …}``."""
    return bool(chunk.get("error")) or chunk.get("object") == "error"


def _stream_error(chunk: dict[str, Any]) -> ModelHTTPError:
    error = chunk.get("error") or chunk
    message = str(error.get("message") if isinstance(error, dict) else error)
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) and 400 <= code < 600 else 500
    return ModelHTTPError(status, message or "the model server's stream reported an error",
                          code=code)


async def _events(response: httpx.Response) -> AsyncIterator[str]:
    """The data of each server-sent event (the ``data:`` lines of one event joined by newlines;
    comments and other fields skipped), at most ``MAX_ANSWER_BYTES`` in all."""
    data: list[str] = []
    total = 0
    async for line in response.aiter_lines():
        total += len(line) + 1
        if total > MAX_ANSWER_BYTES:
            raise ModelHTTPError(502, "the model server's stream is larger than "
                                 f"{MAX_ANSWER_BYTES:,} bytes")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


@dataclass
class DirectModel(ChatModel):
    """``openai/<name>`` (or a bare name) on the OpenAI-compatible server at ``api_base``."""

    async def _ready(self) -> None:
        # The table lookup reads a 3 MB file once per model name: not on the event loop.
        if not model_table.known(self.name):
            await blocking("io", f"model:{self.name}", model_table.entry, self.name,
                           what="reading the model table")

    def known_window(self) -> int | None:
        return model_table.context_window(self.name)

    def _send(self, kwargs: dict[str, Any]) -> tuple[str, dict[str, str], bytes]:
        if not self.api_base:
            raise ValueError(f"{self.name}: the direct client needs an api_base")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        # As litellm and the OpenAI SDK do, OPENAI_API_KEY is the fallback key.
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps({**kwargs, "model": wire_name(self.name)}).encode("utf-8")
        return self.api_base.rstrip("/") + "/chat/completions", headers, body

    @asynccontextmanager
    async def _post(self, kwargs: dict[str, Any]) -> AsyncIterator[httpx.Response]:
        """The chat-completions request's response, its error status raised as ModelHTTPError."""
        url, headers, body = self._send(kwargs)
        async with _client().stream("POST", url, content=body, headers=headers,
                                    timeout=httpx.Timeout(self.timeout)) as response:
            if response.status_code >= 400:
                raise await _failure(response)
            yield response

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        async with self._post(kwargs) as response:
            raw, over = await _read_upto(response, MAX_ANSWER_BYTES)
        if over:
            raise ModelHTTPError(502, "the model server's answer is larger than "
                                 f"{MAX_ANSWER_BYTES:,} bytes")
        try:
            completion = _decode(raw)
        except ValueError as exc:
            raise ModelHTTPError(502, "the model server's answer is not JSON") from exc
        if not isinstance(completion, dict):
            raise ModelHTTPError(502, "the model server's answer is not a JSON object")
        if _is_error(completion) and not completion.get("choices"):
            raise _stream_error(completion)
        if not isinstance(completion.get("choices"), list) or not completion["choices"]:
            raise ModelHTTPError(502, "the model server's answer has no choices")
        return completion

    async def _chunks(self, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        async with self._post(kwargs) as response:
            async for data in _events(response):
                if data.strip() == "[DONE]":
                    return
                try:
                    chunk = _decode(data)
                except ValueError as exc:
                    raise ModelHTTPError(502, "the model server sent an event that is not "
                                         "JSON") from exc
                if not isinstance(chunk, dict):
                    continue
                if _is_error(chunk):
                    raise _stream_error(chunk)
                yield chunk

    def _cost(self, response: Any) -> float | None:
        return self._stream_cost(getattr(response, "usage", None))

    def _stream_cost(self, usage: Any) -> float | None:
        if usage is None:
            return None
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) if details is not None else None
        return model_table.price(self.name, int(getattr(usage, "prompt_tokens", 0) or 0),
                                 int(getattr(usage, "completion_tokens", 0) or 0),
                                 int(cached or 0))
