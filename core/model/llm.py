"""The model interface: what a turn asks of a model, the retries and streaming every client shares,
and the litellm client. litellm is imported here only, and only when a call is made (the import
costs seconds; webhook acks must never pay it). An OpenAI-compatible server at
``IRIS_MODEL_API_BASE`` is called without it (``core/model/direct.py``)."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import random
import re
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.errors import ProviderError
from core.lanes import blocking
from core.messages import Message, ToolCall, Usage
from core.model.printed_calls import PrintedCallFilter
from core.model.prompt_cache import wants_cache_control, with_cache_control
from core.model.stream import StreamAssembler
from core.model.streaming import AnswerSink, answer_sink

log = logging.getLogger("iris.llm")

MAX_BACKOFF = 20.0


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True)
class ModelResponse:
    message: Message
    usage: Usage
    finish_reason: str | None = None


class Model(Protocol):
    name: str

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()
    ) -> ModelResponse: ...


def uses_direct(name: str, api_base: str | None, client: str = "auto") -> bool:
    """Whether ``name`` is called directly: with ``IRIS_MODEL_CLIENT=auto`` (the default), an
    ``openai/…`` (or bare) model name with an ``api_base``; with ``litellm``, never."""
    if client == "litellm" or not api_base:
        return False
    return "/" not in name or name.split("/", 1)[0] == "openai"


def needs_litellm_for(models: Sequence[str | None], api_base: str | None,
                      client: str = "auto") -> bool:
    """Whether a turn's ``models`` (main and side; unset ones skipped) go through litellm:
    False only when every configured one is the direct client's."""
    names = [name for name in models if name]
    return not names or not all(uses_direct(name, api_base, client) for name in names)


_litellm_module: Any = None


def load_litellm() -> Any:
    """Import litellm once, offline (no price-table download), quietly."""
    global _litellm_module
    if _litellm_module is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        litellm.drop_params = True
        logging.getLogger("LiteLLM").setLevel(logging.WARNING)
        _litellm_module = litellm
    return _litellm_module


@functools.lru_cache(maxsize=64)
def litellm_window(name: str) -> int | None:
    """The input window litellm's model info gives ``name`` (None when it has none)."""
    try:
        info = load_litellm().get_model_info(name)
    except Exception:
        return None
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return int(value) if value else None


def supports_vision(name: str) -> bool:
    """Whether litellm's model info says ``name`` takes image parts (False when unknown)."""
    try:
        return bool(load_litellm().supports_vision(model=name))
    except Exception:
        return False


_CONTEXT_HINTS = re.compile(r"context[ _]length|context window|maximum context|too many tokens|"
                            r"prompt is too long", re.IGNORECASE)


def classify_error(exc: BaseException) -> ProviderError:
    """Turn a litellm/provider exception into a ProviderError with a kind and retryability."""
    if isinstance(exc, ProviderError):
        return exc
    status = getattr(exc, "status_code", None)
    text = _plain(str(exc).strip().splitlines()[0][:300]) if str(exc).strip() else (
        type(exc).__name__)
    litellm = sys.modules.get("litellm")  # not imported: the exception cannot be one of its own
    table: list[tuple[Any, str, bool]] = [] if litellm is None else [
        (litellm.ContextWindowExceededError, "context_window", False),
        (litellm.AuthenticationError, "auth", False),
        (litellm.PermissionDeniedError, "auth", False),
        (litellm.RateLimitError, "rate_limit", True),
        (litellm.Timeout, "timeout", True),
        (litellm.NotFoundError, "not_found", False),
        (litellm.BadRequestError, "bad_request", False),
        (litellm.ServiceUnavailableError, "unavailable", True),
        (litellm.InternalServerError, "unavailable", True),
        (litellm.APIConnectionError, "unavailable", True),
    ]
    for cls, kind, retryable in table:
        if isinstance(exc, cls):
            return ProviderError(kind, text, retryable=retryable, status=status)
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return ProviderError("timeout", "the model call timed out", retryable=True)
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.TimeoutException):
        return ProviderError("timeout", "the model server did not answer in time",
                             retryable=True)
    if httpx is not None and isinstance(exc, httpx.TransportError):
        return ProviderError("unavailable", f"the model server could not be reached ({text})",
                             retryable=True)
    if isinstance(status, int):
        if status in (401, 403):
            return ProviderError("auth", text, retryable=False, status=status)
        if status == 429:
            return ProviderError("rate_limit", text, retryable=True, status=status)
        if status == 408:  # the provider gave up waiting (OpenRouter's timeout)
            return ProviderError("timeout", text, retryable=True, status=status)
        if status >= 500:
            return ProviderError("unavailable", text, retryable=True, status=status)
        if status == 404:
            return ProviderError("not_found", text, retryable=False, status=status)
        if status in (400, 413) and (getattr(exc, "code", None) == "context_length_exceeded"
                                     or _CONTEXT_HINTS.search(text)):
            return ProviderError("context_window", text, retryable=False, status=status)
        return ProviderError("bad_request", text, retryable=False, status=status)
    return ProviderError("unknown", f"{type(exc).__name__}: {text}", retryable=False)


_WRAPPERS = re.compile(r"^(?:(?:litellm\.\w+|\w+(?:Error|Exception))\s*[:-]\s*)*")


def _plain(text: str) -> str:
    """The provider's own words, without litellm's and the SDK's class names in front
    ("litellm.APIError: APIError: OpenAIException - Overloaded" -> "Overloaded"): the user
    reads this sentence when a turn fails."""
    return _WRAPPERS.sub("", text).strip() or text


def retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        return float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None


def _usage(model: str, raw: Any, cost: float | None) -> Usage:
    """Our Usage from a completion's ``usage`` object (None: the provider sent none)."""
    if raw is None:
        return Usage(model=model, cost_usd=cost)
    details = getattr(raw, "prompt_tokens_details", None)
    cache_read = getattr(raw, "cache_read_input_tokens", None) or (
        getattr(details, "cached_tokens", None) if details is not None else None
    )
    return Usage(
        model=model,
        prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cache_read_tokens=int(cache_read or 0),
        cache_write_tokens=int(getattr(raw, "cache_creation_input_tokens", 0) or 0),
        cost_usd=cost,
    )


def _message(raw: Any) -> Message:
    calls = []
    for index, call in enumerate(getattr(raw, "tool_calls", None) or []):
        function = call.function
        arguments = function.arguments
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments or {})
        calls.append(
            ToolCall(id=call.id or f"call_{index}", name=function.name or "", arguments=arguments)
        )
    return Message(role="assistant", content=raw.content or "", tool_calls=tuple(calls))


@dataclass
class ChatModel:
    """A chat-completions model: the request every client sends, retries with backoff, and
    streaming to the turn's answer sink. Subclasses say how one call is made."""

    name: str
    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    retries: int = 2
    temperature: float | None = None
    max_tokens: int | None = None  # cap on the answer's length (finish_reason "length" past it)
    extra: dict[str, Any] = field(default_factory=dict)
    prompt_caching: bool = True  # Anthropic cache_control breakpoints (core/model/prompt_cache.py)
    free: bool = False  # no per-token price: a model running on this machine

    def _payload(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        payload = [m.to_openai() for m in messages]
        if self.prompt_caching and wants_cache_control(self.name):
            return with_cache_control(payload)
        return payload

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()
    ) -> ModelResponse:
        await self._ready()
        kwargs: dict[str, Any] = {
            "model": self.name,
            "messages": self._payload(messages),
            **self.extra,
        }
        if tools:
            kwargs["tools"] = [t.to_openai() for t in tools]
            kwargs["tool_choice"] = "auto"
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        sink = answer_sink()
        if sink is not None:
            return await self._streamed(kwargs, sink)
        response = await self._with_retries(kwargs)
        choice = response.choices[0]
        return ModelResponse(
            message=_message(choice.message),
            usage=_usage(self.name, getattr(response, "usage", None),
                         self._priced(self._cost(response))),
            finish_reason=getattr(choice, "finish_reason", None),
        )

    async def _ready(self) -> None:
        """Load what the calls need (off the event loop when that is slow)."""

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        """One unstreamed call: the completion, its fields as attributes."""
        raise NotImplementedError

    def _chunks(self, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        """One streamed call: its ``chat.completion.chunk`` objects (or dicts)."""
        raise NotImplementedError

    def _cost(self, response: Any) -> float | None:
        """The price of an unstreamed call, when known."""
        return None

    def _stream_cost(self, usage: Any) -> float | None:
        """The price of a streamed call from its usage, when known."""
        return None

    def _priced(self, cost: float | None) -> float | None:
        return 0.0 if cost is None and self.free else cost

    async def _with_retries(self, kwargs: dict[str, Any], sink: AnswerSink | None = None) -> Any:
        attempt = 0
        while True:
            try:
                if sink is None:
                    return await self._create(kwargs)
                return await self._read_stream(kwargs, sink)
            except Exception as exc:
                error = classify_error(exc)
                if not error.retryable or attempt >= self.retries:
                    raise error from exc
                delay = retry_after(exc) or (0.5 * 2**attempt + random.uniform(0, 0.25))
                log.warning("model %s: %s; retrying in %.1fs", self.name, error.kind, delay)
                await asyncio.sleep(min(delay, MAX_BACKOFF))
                attempt += 1

    async def _read_stream(self, kwargs: dict[str, Any], sink: AnswerSink) -> StreamAssembler:
        """One streamed call: text deltas go to ``sink`` until the step shows a tool call.
        A call that breaks off after some text resets the sink before it is retried."""
        assembled = StreamAssembler()
        shown = PrintedCallFilter(sink)  # a tool call printed as text is never streamed
        spoke = False
        try:
            async for chunk in self._chunks(kwargs):
                delta = assembled.add(chunk)
                if assembled.has_tool_calls:
                    if spoke:
                        shown.reset()
                        spoke = False
                    continue
                if delta:
                    shown.text(delta)
                    spoke = True
        except BaseException:
            if spoke:
                shown.reset()
            raise
        if not assembled.has_tool_calls:
            shown.finish()
        return assembled

    async def _streamed(self, kwargs: dict[str, Any], sink: AnswerSink) -> ModelResponse:
        kwargs = {**kwargs, "stream": True, "stream_options": {"include_usage": True}}
        assembled: StreamAssembler = await self._with_retries(kwargs, sink)
        cost = None
        if assembled.usage is not None:
            try:
                cost = self._stream_cost(assembled.usage)
            except Exception:
                cost = None
        return ModelResponse(message=assembled.message(),
                             usage=_usage(self.name, assembled.usage, self._priced(cost)),
                             finish_reason=assembled.finish_reason)


@dataclass
class LiteLLMModel(ChatModel):
    """Any litellm model string: ``anthropic/…``, ``openai/…``, ``openrouter/…``, ``ollama/…``,
    or ``openai/<name>`` with ``api_base`` for an OpenAI-compatible server."""

    async def _ready(self) -> None:
        if _litellm_module is None:  # once per process: later calls need no thread
            await blocking("io", "import:litellm", load_litellm, what="loading litellm")

    def known_window(self) -> int | None:
        return litellm_window(self.name)

    def _litellm_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        out = {**kwargs, "timeout": self.timeout, "num_retries": 0}
        if self.api_base:
            out["api_base"] = self.api_base
        if self.api_key:
            out["api_key"] = self.api_key
        return out

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        return await load_litellm().acompletion(**self._litellm_kwargs(kwargs))

    async def _chunks(self, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        stream = await load_litellm().acompletion(**self._litellm_kwargs(kwargs))
        async for chunk in stream:
            yield chunk

    def _cost(self, response: Any) -> float | None:
        try:
            cost = load_litellm().completion_cost(completion_response=response)
        except Exception:
            return None
        return float(cost) if cost is not None else None

    def _stream_cost(self, usage: Any) -> float | None:
        litellm = load_litellm()
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=self.name, usage_object=usage if isinstance(usage, litellm.Usage) else None,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )
        return float(prompt_cost + completion_cost)
