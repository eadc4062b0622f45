"""``/line/webhook``: LINE Messaging API webhooks.

``POST`` checks ``x-line-signature`` (base64 of the HMAC-SHA256 of the raw body with the channel
secret) before reading anything, parses the events, records each message once and dispatches
its chat, and answers 200; the turn runs after the ack, in a worker. The console's "Verify"
button posts a signed body with no events: answered 200 like any other. LINE redelivers an event
it got no 200 for (``deliveryContext.isRedelivery``, the same ``webhookEventId`` and message
id): the message id is the inbox's idempotency key, so a redelivery is a no-op. A postback from
one of Iris' quick-reply buttons takes the same path as a Telegram or Slack press
(``functions.webhooks.accept_press``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from fastapi import APIRouter, BackgroundTasks, Request

from core.platforms.line_inbound import LineWebhook, parse_webhook
from functions.auth import ApiError
from functions.bodies import parse_json
from functions.runtime import Runtime
from functions.webhooks import accept, accept_press, read_body

MAX_PAYLOAD_BYTES = 1024 * 1024
SIGNATURE_HEADER = "x-line-signature"


def configured(rt: Runtime) -> str:
    """The channel secret, or 404/503 naming what is missing."""
    secret = rt.settings.secret("line_channel_secret")
    token = rt.settings.secret("line_channel_access_token")
    if not (secret or token):
        raise ApiError(
            404,
            "LINE is not configured on this Iris: set IRIS_LINE_CHANNEL_SECRET "
            "and IRIS_LINE_CHANNEL_ACCESS_TOKEN",
            code="line_disabled",
        )
    missing = [
        name
        for name, value in (
            ("IRIS_LINE_CHANNEL_SECRET", secret),
            ("IRIS_LINE_CHANNEL_ACCESS_TOKEN", token),
        )
        if not value
    ]
    if missing:
        raise ApiError(
            503,
            f"LINE is half configured: {', '.join(missing)} not set",
            code="line_not_configured",
        )
    assert secret is not None
    return secret


def verify_signature(secret: str, body: bytes, header: str) -> None:
    """Base64 of HMAC-SHA256(channel secret, raw body), compared in constant time."""
    expected = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest())
    if not hmac.compare_digest(expected, header.strip().encode("latin-1", "replace")):
        raise ApiError(
            401,
            "missing or invalid x-line-signature",
            code="bad_signature",
            kind="authentication_error",
        )


def parse_body(body: bytes) -> LineWebhook:
    return parse_json(LineWebhook, body, "a LINE webhook", "bad_line_payload")


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()

    @router.post("/line/webhook")
    async def line_webhook(request: Request, background: BackgroundTasks) -> dict[str, object]:
        secret = configured(rt)
        body = await read_body(request, MAX_PAYLOAD_BYTES)
        verify_signature(secret, body, request.headers.get(SIGNATURE_HEADER, ""))
        payload = parse_body(body)
        statuses = []
        for parsed in parse_webhook(payload, rt.settings.group_reply_mode):
            message = parsed.message
            if message is None:
                statuses.append("ignored")
                continue
            if message.press is not None:
                outcome = await accept_press(rt, message, background, group_ref=parsed.group_ref)
            else:
                outcome = await accept(
                    rt, message, background, group_ref=parsed.group_ref, instead=parsed.reply
                )
            statuses.append(outcome.status)
        return {"ok": True, "statuses": statuses}

    return router
