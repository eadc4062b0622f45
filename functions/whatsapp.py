"""``/whatsapp/webhook``: Meta's WhatsApp Cloud API webhooks.

``GET`` answers the subscription check (``hub.mode=subscribe``, ``hub.verify_token`` equal to
``IRIS_WHATSAPP_VERIFY_TOKEN``: echo ``hub.challenge``). ``POST`` checks ``X-Hub-Signature-256``
(HMAC-SHA256 of the raw body with the app secret) before reading anything, parses the payload,
records each message once and dispatches its chat, and answers 200; the turn runs after the ack,
in a worker. Meta re-sends a webhook until it gets a 200, so status callbacks and messages Iris
does not act on are acknowledged too. A press of a ``clarify`` button takes the same path as a
Telegram or Slack press (``functions.webhooks.accept_press``). A tap on a quick-reply button of
a template Iris sent to reopen the window (``tap``) releases the held replies without a turn.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import PlainTextResponse

from core.asking.clarify import PRESS_REFUSED
from core.errors import NotFound
from core.messages import InboundMessage
from core.platforms.whatsapp_inbound import WaPayload, parse_payload
from functions.auth import ApiError
from functions.bodies import parse_json
from functions.runtime import Runtime
from functions.webhooks import Outcome, accept, accept_press, access, answer, read_body

MAX_PAYLOAD_BYTES = 3 * 1024 * 1024
SIGNATURE_HEADER = "x-hub-signature-256"


def configured(rt: Runtime) -> tuple[str, str]:
    """The app secret and Iris' phone number id, or 404/503 naming what is missing."""
    settings = rt.settings
    secret = settings.secret("whatsapp_app_secret")
    token = settings.secret("whatsapp_token")
    phone = settings.whatsapp_phone_number_id
    if not (secret or token or phone):
        raise ApiError(404, "WhatsApp is not configured on this Iris: set IRIS_WHATSAPP_TOKEN, "
                       "IRIS_WHATSAPP_APP_SECRET and IRIS_WHATSAPP_PHONE_NUMBER_ID",
                       code="whatsapp_disabled")
    missing = [name for name, value in (("IRIS_WHATSAPP_APP_SECRET", secret),
                                        ("IRIS_WHATSAPP_TOKEN", token),
                                        ("IRIS_WHATSAPP_PHONE_NUMBER_ID", phone)) if not value]
    if missing:
        raise ApiError(503, f"WhatsApp is half configured: {', '.join(missing)} not set",
                       code="whatsapp_not_configured")
    assert secret is not None and phone is not None
    return secret, phone


def verify_signature(secret: str, body: bytes, header: str) -> None:
    """``sha256=<hex>`` of the raw bytes, compared in constant time."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), header.strip().lower().encode("latin-1")):
        raise ApiError(401, "missing or invalid X-Hub-Signature-256", code="bad_signature",
                       kind="authentication_error")


def parse_body(body: bytes) -> WaPayload:
    return parse_json(WaPayload, body, "a WhatsApp webhook", "bad_whatsapp_payload")


def release_held(rt: Runtime, user_id: str, chat_key: str, background: BackgroundTasks) -> None:
    """The person wrote: their window is open again, so replies held behind a template
    (``IRIS_WHATSAPP_TEMPLATE``) go out now, after the ack."""
    for delivery_id in rt.store.deliveries.release_held(user_id, chat_key):
        background.add_task(rt.delivery.attempt, user_id, delivery_id)


async def press(rt: Runtime, message: InboundMessage, background: BackgroundTasks) -> Outcome:
    """A press of a ``clarify`` button: recorded as the answer when it counts. When it does not
    (the question was answered, superseded or expired, or is not this person's), the person is
    told so in a short message, unless this is Meta re-sending the press that did count."""
    outcome = await accept_press(rt, message, background)
    if outcome.status != "ignored" or outcome.user_id is None:
        return outcome
    wamid = str(message.meta["message_id"])
    counted = rt.store.inbox.find(outcome.user_id, "whatsapp", message.platform_message_id)
    if counted is None or counted.message.meta.get("message_id") != wamid:
        answer(rt, replace(message, platform_message_id=wamid), PRESS_REFUSED, background)
    return outcome


async def tap(rt: Runtime, message: InboundMessage, background: BackgroundTasks) -> Outcome:
    """A tap on a quick-reply button of a template (``message.tapped``: its wamid). When the
    template is one Iris sent this person's chat to reopen the window (held replies still
    waiting or already sent), the tap is recorded as a finished inbox entry, so a re-sent
    webhook is a duplicate, and starts no turn: the caller releases the held replies, which
    are the answer to it. A tap naming any other message (stale, forged, someone else's
    template) is an ordinary message, the button's text read by the model as if typed."""
    store = rt.store
    try:
        owner: str | None = store.users.resolve(message.account)
    except NotFound:
        owner = None
    template = str(message.tapped)
    if owner is None or not store.deliveries.reopened_by(owner, message.chat_key, template):
        return await accept(rt, message, background)
    decision = access(rt, message)
    if not decision.allowed or decision.user_id != owner:
        return Outcome("denied")
    with store.transaction():
        entry_id = store.inbox.add(owner, message)
        if entry_id is not None:
            store.inbox.finish(owner, entry_id, status="done", session_id=None, reply=None)
    if entry_id is None:
        existing = store.inbox.find(owner, "whatsapp", message.platform_message_id)
        return Outcome("duplicate", owner, existing.id if existing else None)
    return Outcome("tapped", owner, entry_id)


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()

    @router.get("/whatsapp/webhook")
    async def whatsapp_verify(request: Request) -> PlainTextResponse:
        expected = rt.settings.secret("whatsapp_verify_token")
        if not expected:
            raise ApiError(404, "set IRIS_WHATSAPP_VERIFY_TOKEN to subscribe this webhook",
                           code="whatsapp_disabled")
        query = request.query_params
        given = query.get("hub.verify_token", "").encode()
        if query.get("hub.mode") != "subscribe" or not hmac.compare_digest(
                given, expected.encode()):
            raise ApiError(403, "wrong hub.mode or hub.verify_token", code="bad_verify_token",
                           kind="authentication_error")
        return PlainTextResponse(query.get("hub.challenge", ""))

    @router.post("/whatsapp/webhook")
    async def whatsapp_webhook(request: Request, background: BackgroundTasks) -> dict[str, object]:
        secret, phone = configured(rt)
        body = await read_body(request, MAX_PAYLOAD_BYTES)
        verify_signature(secret, body, request.headers.get(SIGNATURE_HEADER, ""))
        payload = parse_body(body)
        if payload.object != "whatsapp_business_account":
            return {"ok": True, "statuses": []}
        statuses = []
        for parsed in parse_payload(payload, phone):
            if parsed.message is None:
                statuses.append("ignored")
                continue
            if parsed.message.press is not None:
                outcome = await press(rt, parsed.message, background)
            elif parsed.message.tapped is not None:
                outcome = await tap(rt, parsed.message, background)
            else:
                outcome = await accept(rt, parsed.message, background, instead=parsed.reply)
            statuses.append(outcome.status)
            if outcome.status in ("recorded", "tapped") and outcome.user_id is not None:
                release_held(rt, outcome.user_id, parsed.message.chat_key, background)
        return {"ok": True, "statuses": statuses}

    return router
