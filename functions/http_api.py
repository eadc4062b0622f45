"""The OpenAI-compatible HTTP API: ``POST /v1/chat/completions`` (plain and SSE), ``/v1/models``.

The request's ``user`` names the end user (account ``http:<user>``); only the last user message is
new, the server keeps the history. ``X-Iris-Session`` pins a session; ``Idempotency-Key`` makes a
retried request return the first result instead of running a second turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from core.errors import NotFound
from core.ids import USER_ID_PREFIXES, looks_like_user_id
from core.lanes import in_store_lane
from core.messages import Attachment, InboundMessage
from core.model.streaming import AnswerListener, StreamedText
from core.store.inbox import InboxEntry
from functions.auth import ApiError
from functions.ingress import receive
from functions.runtime import NeedsRuntime, Runtime

USER_PATTERN = r"^[A-Za-z0-9_.@+-]{1,128}$"
WAIT_SECONDS = 600.0
KEEPALIVE_SECONDS = 10.0
SESSION_POLL_SECONDS = 0.1
# How often a waiting request reads its entry from the store. Where the worker may be another
# container (Modal), 0.5 s; where turns run in this process their end wakes the waiter at once
# (``Notifier``) and the reads are only a safety net for ends nobody announces (a turn given
# up by the sweeper): they start at 0.5 s and double up to 4 s, instead of a read every 0.5 s
# per waiting request competing with the turns for the store (issue 30: 50 users at once).
FINISH_POLL_SECONDS = 0.5
FINISH_POLL_LOCAL_MAX = 4.0

ERROR_STATUS = {
    "auth": (502, "provider_auth_error"),
    "rate_limit": (503, "provider_rate_limited"),
    "timeout": (504, "provider_timeout"),
    "unavailable": (503, "provider_unavailable"),
    "context_window": (400, "context_length_exceeded"),
    "config": (503, "not_configured"),
    "cancelled": (409, "turn_cancelled"),
}


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool = False
    user: str | None = Field(default=None, pattern=USER_PATTERN)


def _text_of(message: ChatMessageIn) -> str:
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    parts = []
    for part in message.content:
        if part.get("type") in ("file", "image_url"):
            continue  # see _files_of, _images_of
        if part.get("type") != "text" or not isinstance(part.get("text"), str):
            raise ApiError(400, f"unsupported content part type {part.get('type')!r}: "
                           "only text, image_url and file parts are accepted",
                           code="unsupported_content")
        parts.append(part["text"])
    return "\n".join(parts)


def _files_of(message: ChatMessageIn) -> tuple[Attachment, ...]:
    """OpenAI ``file`` content parts (``file_data`` as a base64 data: URL, ``filename``)."""
    from core.intake.documents import DocumentRefused, decode_data_url

    if not isinstance(message.content, list):
        return ()
    files = []
    for part in message.content:
        if part.get("type") != "file":
            continue
        file = part.get("file")
        if not isinstance(file, dict):
            file = {}
        data = file.get("file_data")
        if not isinstance(data, str):
            raise ApiError(400, "a file part needs file.file_data (a base64 data: URL); "
                           "file_id uploads are not supported", code="unsupported_content")
        try:
            mime, _ = decode_data_url(data)
        except DocumentRefused as exc:
            raise ApiError(400, f"file part: {exc}", code="bad_file") from None
        name = file.get("filename") if isinstance(file.get("filename"), str) else None
        files.append(Attachment(kind="file", ref=data, mime_type=mime, name=name))
    return tuple(files)


def _images_of(message: ChatMessageIn, max_bytes: int) -> tuple[Attachment, ...]:
    """OpenAI ``image_url`` parts: a ``data:`` URL is checked here (a clear 400, nothing
    recorded); an http(s) URL is fetched by the turn, through the SSRF-safe fetcher."""
    from core.intake.images import MAX_IMAGES, ImageRefused, decode_image_url

    if not isinstance(message.content, list):
        return ()
    images = []
    for part in message.content:
        if part.get("type") != "image_url":
            continue
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if not isinstance(url, str) or not url:
            raise ApiError(400, "an image_url part needs image_url.url", code="bad_image")
        if url.startswith("data:"):
            try:
                decode_image_url(url, max_bytes)
            except ImageRefused as exc:
                raise ApiError(400, f"image_url part: {exc}; nothing was saved",
                               code="bad_image") from None
        elif not url.lower().startswith(("http://", "https://")):
            raise ApiError(400, "image_url.url must be an http(s) or data: URL",
                           code="bad_image")
        images.append(Attachment(kind="image", ref=url))
    if len(images) > MAX_IMAGES:
        raise ApiError(400, f"at most {MAX_IMAGES} images per message", code="bad_image")
    return tuple(images)


CLIENTS = ("terminal",)  # X-Iris-Client values: how sessions from that client are labelled


def inbound_from(rt: Runtime, body: ChatCompletionRequest, *, idempotency_key: str | None,
                 session: str | None, client: str | None = None) -> InboundMessage:
    last = body.messages[-1]
    if last.role != "user":
        raise ApiError(400, "the last message must have role 'user'", param="messages")
    text = _text_of(last)
    files = _files_of(last) + _images_of(last, rt.settings.image_max_bytes)
    if not text.strip() and not files:
        raise ApiError(400, "the last user message is empty", param="messages")
    limit = rt.settings.max_message_chars
    if len(text) > limit:
        raise ApiError(413, f"message is {len(text)} characters; the limit is {limit}",
                       code="message_too_large")
    user = body.user or "default"
    if looks_like_user_id(user):
        raise ApiError(400, f"user names starting with {' or '.join(USER_ID_PREFIXES)} are "
                       "reserved for Iris' internal ids; pick another name", param="user",
                       code="reserved_user_name")
    account = f"http:{user}"
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= 200:
        raise ApiError(400, "Idempotency-Key must be 1-200 characters", code="bad_idempotency_key")
    if client is not None and client not in CLIENTS:
        raise ApiError(400, f"X-Iris-Client must be one of: {', '.join(CLIENTS)}",
                       code="bad_client")
    key = idempotency_key or uuid.uuid4().hex
    return InboundMessage(
        platform="http", chat_id=user, account=account,
        platform_message_id=f"{account}:{key}", text=text, session_hint=session,
        attachments=files, stream=bool(body.stream), client=client,
    )


async def wait_finished(rt: Runtime, user_id: str, entry_id: int, timeout: float) -> InboxEntry:
    """Wait for a worker (here or in another container) to finish an entry."""
    event = rt.notifier.watch(entry_id)
    deadline = time.monotonic() + timeout
    pause = FINISH_POLL_SECONDS
    longest = FINISH_POLL_LOCAL_MAX if isinstance(rt.dispatcher, NeedsRuntime) else pause
    try:
        while True:
            entry = await in_store_lane(user_id, rt.store.inbox.get, user_id, entry_id)
            if entry.finished:
                return entry
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ApiError(504, "the turn is still running; retry with the same "
                               "Idempotency-Key to get its result", code="turn_timeout")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=min(remaining, pause))
            pause = min(pause * 2, longest)
    finally:
        rt.notifier.forget(entry_id)


async def wait_session(rt: Runtime, user_id: str, entry_id: int, timeout: float) -> str:
    """The session an entry's turn runs in, once the turn has started (or finished): a
    streaming response's ``X-Iris-Session`` header, sent before its first byte."""
    event = rt.notifier.watch(entry_id)
    deadline = time.monotonic() + timeout
    try:
        while True:
            entry = await in_store_lane(user_id, rt.store.inbox.get, user_id, entry_id)
            if entry.session_id or entry.finished:
                return entry.session_id or ""
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ApiError(504, "the turn has not started; retry with the same "
                               "Idempotency-Key to get its result", code="turn_timeout")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=min(remaining, SESSION_POLL_SECONDS))
    finally:
        rt.notifier.forget(entry_id)


def _error_for(entry: InboxEntry) -> ApiError:
    kind = (entry.error or "unknown").split(":", 1)[0]
    status, code = ERROR_STATUS.get(kind, (502, "turn_failed"))
    return ApiError(status, entry.reply or entry.error or "the turn failed", code=code,
                    kind="upstream_error")


def completion_body(rt: Runtime, entry: InboxEntry) -> dict[str, Any]:
    usages = rt.store.usage.for_inbox(entry.user_id, entry.id)
    prompt = sum(u.prompt_tokens for u in usages)
    completion = sum(u.completion_tokens for u in usages)
    return {
        "id": f"chatcmpl-iris-{entry.id}",
        "object": "chat.completion",
        "created": int(entry.done_at or entry.received_at),
        "model": usages[-1].model if usages else (rt.settings.model or "iris"),
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": entry.reply or ""},
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _chunk(entry_id: int, created: int, model: str, delta: dict[str, Any],
           finish: str | None = None) -> str:
    body = {
        "id": f"chatcmpl-iris-{entry_id}", "object": "chat.completion.chunk",
        "created": created, "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n"


async def stream_events(rt: Runtime, user_id: str, entry_id: int,
                        listener: AnswerListener | None = None) -> AsyncIterator[str]:
    """The answer as server-sent events: text deltas as the model produces them when the turn
    runs in this process (``listener``), completed by the stored reply when the turn ends."""
    created, model = int(rt.store.clock.now()), rt.settings.model or "iris"
    yield _chunk(entry_id, created, model, {"role": "assistant", "content": ""})
    waiter = asyncio.ensure_future(wait_finished(rt, user_id, entry_id, WAIT_SECONDS))
    sent = StreamedText()
    try:
        while True:
            for event in listener.take() if listener is not None else ():
                piece = sent.add(event)
                if piece:
                    yield _chunk(entry_id, created, model, {"content": piece})
            if waiter.done():
                break
            more = asyncio.ensure_future(listener.wait()) if listener is not None else None
            done, _ = await asyncio.wait({waiter} | ({more} if more else set()),
                                         timeout=KEEPALIVE_SECONDS,
                                         return_when=asyncio.FIRST_COMPLETED)
            if more is not None and not more.done():
                more.cancel()
            if not done:
                yield ": keep-alive\n\n"
        try:
            entry = waiter.result()
        except ApiError as exc:
            yield f"data: {json.dumps(exc.body())}\n\n"
            return
        if entry.status != "done":
            yield f"data: {json.dumps(_error_for(entry).body())}\n\n"
            return
        body = await in_store_lane(entry.user_id, completion_body, rt, entry)
        rest = sent.rest(entry.reply or "")
        if rest:
            yield _chunk(entry_id, created, body["model"], {"content": rest})
        yield _chunk(entry_id, created, body["model"], {}, finish="stop")
        yield "data: [DONE]\n\n"
    finally:
        waiter.cancel()
        if listener is not None:
            listener.close()


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()

    @router.get("/v1/models")
    async def models() -> dict[str, Any]:
        name = rt.settings.model or "iris"
        entry = {"id": name, "object": "model", "owned_by": "iris",
                 "iris_embedded_demo": rt.embedded_model}
        return {"object": "list", "data": [entry]}

    @router.post("/v1/chat/completions")
    async def chat_completions(
        body: ChatCompletionRequest,
        request: Request,
        idempotency_key: str | None = Header(default=None),
        x_iris_session: str | None = Header(default=None),
        x_iris_client: str | None = Header(default=None),
    ) -> Any:
        message = inbound_from(rt, body, idempotency_key=idempotency_key, session=x_iris_session,
                               client=x_iris_client)
        if x_iris_session:
            try:
                owner = rt.store.users.resolve(message.account)
                rt.store.sessions.get(owner, x_iris_session)
            except NotFound:
                raise ApiError(404, f"no session {x_iris_session!r} for this user",
                               code="session_not_found") from None
        received = await receive(rt, message)
        if received.duplicate and received.entry and received.entry.message.text != message.text:
            raise ApiError(409, "this Idempotency-Key was used for a different request",
                           code="idempotency_conflict")
        if body.stream:
            listener = rt.answers.listen(received.user_id, received.entry_id)
            try:
                session = await wait_session(rt, received.user_id, received.entry_id,
                                             WAIT_SECONDS)
            except BaseException:
                listener.close()
                raise
            return StreamingResponse(
                stream_events(rt, received.user_id, received.entry_id, listener),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no",
                         "X-Iris-Session": session},
            )
        entry = await wait_finished(rt, received.user_id, received.entry_id, WAIT_SECONDS)
        headers = {"X-Iris-Session": entry.session_id or ""}
        if entry.status != "done":
            error = _error_for(entry)
            return JSONResponse(error.body(), status_code=error.status, headers=headers)
        completion = await in_store_lane(entry.user_id, completion_body, rt, entry)
        return JSONResponse(completion, headers=headers)

    return router
