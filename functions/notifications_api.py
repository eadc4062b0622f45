"""The Iris inbox over HTTP (the chat API's key): what scheduled jobs delivered to an API user
while they were away, and the webhook they may be pushed to.

    GET    /v1/notifications?user=alice          unread results, oldest first
    POST   /v1/notifications/read                {"user": "alice", "up_to": 42}
    PUT    /v1/notifications/webhook             {"user": "alice", "url": "https://…"}
                                                 → {"url": …, "secret": "whsec_…"} (shown once)
                                                 (400 for local, private or metadata addresses)
    GET    /v1/notifications/webhook?user=alice  → {"url": …} or 404
    DELETE /v1/notifications/webhook?user=alice

``user`` is the chat API's ``user`` (account ``http:<user>``; the terminal's is ``$USER``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from core.errors import NotFound
from core.platforms import inbox
from functions.auth import ApiError
from functions.http_api import USER_PATTERN
from functions.runtime import Runtime

MAX_URL = 2000


class ReadRequest(BaseModel):
    user: str = Field(pattern=USER_PATTERN)
    up_to: int = Field(ge=0)


class WebhookRequest(BaseModel):
    user: str = Field(pattern=USER_PATTERN)
    url: str = Field(max_length=MAX_URL)


def _checked_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ApiError(400, "url must be an http:// or https:// URL with a host", param="url",
                       code="bad_webhook_url")
    return url.strip()


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()
    store = rt.store

    def existing(user: str) -> str | None:
        try:
            return store.users.resolve(f"http:{user}")
        except NotFound:
            return None

    @router.get("/v1/notifications")
    async def unread(user: str = Query(pattern=USER_PATTERN),
                     limit: int = Query(default=100, ge=1, le=500)) -> dict[str, Any]:
        user_id = existing(user)
        found = store.deliveries.unread(user_id, inbox.PLATFORM, limit=limit) if user_id else []
        return {"object": "list", "data": [inbox.notification_json(d) for d in found]}

    @router.post("/v1/notifications/read")
    async def mark_read(body: ReadRequest) -> dict[str, Any]:
        user_id = existing(body.user)
        marked = store.deliveries.mark_read(user_id, inbox.PLATFORM, up_to=body.up_to) \
            if user_id else 0
        return {"marked": marked}

    @router.put("/v1/notifications/webhook")
    async def set_webhook(body: WebhookRequest) -> dict[str, Any]:
        url = _checked_url(body.url)
        try:
            url = await inbox.check_webhook_url(url, rt.settings, rt.resolver)
        except ValueError as exc:
            raise ApiError(400, f"url refused: {exc}", param="url",
                           code="webhook_url_refused") from None
        user_id = store.users.for_account(f"http:{body.user}")
        hook = store.webhooks.set(user_id, url, inbox.new_secret())
        return {"url": hook.url, "secret": hook.secret,
                "signature_header": inbox.SIGNATURE_HEADER}

    @router.get("/v1/notifications/webhook")
    async def get_webhook(user: str = Query(pattern=USER_PATTERN)) -> dict[str, Any]:
        user_id = existing(user)
        hook = store.webhooks.get(user_id) if user_id else None
        if hook is None:
            raise ApiError(404, f"no webhook for {user!r}", code="webhook_not_found")
        return {"url": hook.url}

    @router.delete("/v1/notifications/webhook")
    async def remove_webhook(user: str = Query(pattern=USER_PATTERN)) -> dict[str, Any]:
        user_id = existing(user)
        return {"removed": bool(user_id and store.webhooks.remove(user_id))}

    return router
