"""``/sms/webhook``: incoming SMS and MMS from Twilio (a phone number's "A message comes in"
webhook, HTTP POST).

The ``X-Twilio-Signature`` header is checked before anything is read: base64 of the HMAC-SHA1,
keyed with the auth token, of the full URL Twilio called followed by every POST parameter's
name and value, sorted by name (Twilio's "Webhooks security"). A proxy in front of Iris changes
the URL Iris sees, so the URL is built from ``IRIS_PUBLIC_URL``, which must be what Twilio is
configured to call. The answer is an empty TwiML ``<Response/>``: the reply goes out after the
ack through the Messages API. ``MessageSid`` is the inbox key, so a webhook Twilio sends again
is a no-op. MMS media (``MediaUrl0``…) become attachments the sender downloads with the
account's credentials: pictures go to the image intake, other files (PDF, text, CSV…) to the
documents intake, named ``mms-<n>.<suffix>`` by their content type.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from urllib.parse import parse_qsl

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import Response

from core.messages import Attachment, InboundMessage
from core.platforms.media import kind_for
from functions.auth import ApiError
from functions.runtime import Runtime
from functions.webhooks import accept, read_body

MAX_PAYLOAD_BYTES = 64 * 1024
MAX_MEDIA = 10
SIGNATURE_HEADER = "x-twilio-signature"
PATH = "/sms/webhook"
TWIML_EMPTY = '<?xml version="1.0" encoding="UTF-8"?><Response/>'
NUMBER = re.compile(r"^\+[1-9]\d{4,14}$")
SID = re.compile(r"^(SM|MM)[0-9a-fA-F]{32}$")
SUFFIXES = {
    "application/pdf": ".pdf",
    "text/plain": ".txt",
    "text/csv": ".csv",
    "text/markdown": ".md",
    "application/json": ".json",
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/gif": ".gif",
    "image/webp": ".webp",
}


def configured(rt: Runtime) -> tuple[str, str, str]:
    """(account SID, auth token, the webhook's public URL), or 404/503 naming what is missing."""
    settings = rt.settings
    sid, token = settings.twilio_account_sid, settings.secret("twilio_auth_token")
    number, public = settings.twilio_from_number, settings.public_url
    if not (sid or token or number):
        raise ApiError(
            404,
            "SMS is not configured on this Iris: set IRIS_TWILIO_ACCOUNT_SID, "
            "IRIS_TWILIO_AUTH_TOKEN and IRIS_TWILIO_FROM_NUMBER",
            code="sms_disabled",
        )
    missing = [
        name
        for name, value in (
            ("IRIS_TWILIO_ACCOUNT_SID", sid),
            ("IRIS_TWILIO_AUTH_TOKEN", token),
            ("IRIS_TWILIO_FROM_NUMBER", number),
            ("IRIS_PUBLIC_URL", public),
        )
        if not value
    ]
    if missing:
        raise ApiError(
            503, f"SMS is half configured: {', '.join(missing)} not set", code="sms_not_configured"
        )
    assert sid and token and public
    return sid, token, public.rstrip("/") + PATH


def signature(token: str, url: str, params: list[tuple[str, str]]) -> str:
    """Twilio's signature of a form POST to ``url``: each parameter name, in order, followed by
    its values (a repeated value once, as Twilio's own validators do), appended to the URL."""
    data = url + "".join(name + value for name, value in sorted(set(params)))
    return base64.b64encode(hmac.new(token.encode(), data.encode(), hashlib.sha1).digest()).decode()


def verify(token: str, url: str, params: list[tuple[str, str]], header: str) -> None:
    expected = signature(token, url, params)
    if not hmac.compare_digest(expected.encode(), header.strip().encode("latin-1", "replace")):
        raise ApiError(
            403,
            "missing or invalid X-Twilio-Signature",
            code="bad_signature",
            kind="authentication_error",
        )


def parse_form(body: bytes) -> list[tuple[str, str]]:
    try:
        return parse_qsl(
            body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=200
        )
    except (UnicodeDecodeError, ValueError):
        raise ApiError(
            400, "not a Twilio webhook: the body is not a form", code="bad_sms_payload"
        ) from None


def media_name(index: int, content_type: str | None) -> str:
    """MMS media carry no file name: ``mms-1.pdf``, by position and content type."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    return f"mms-{index + 1}{SUFFIXES.get(mime, '')}"


def to_message(form: dict[str, str], account_sid: str) -> InboundMessage | None:
    """The message of a Twilio webhook, or None when it is not one Iris reads (another account,
    a status callback)."""
    if form.get("AccountSid") != account_sid or not SID.match(form.get("MessageSid", "")):
        return None
    sender = form.get("From", "")
    if not NUMBER.match(sender):
        raise ApiError(
            400, "not a Twilio webhook: From is not an E.164 number", code="bad_sms_payload"
        )
    count = int(form["NumMedia"]) if form.get("NumMedia", "0").isdigit() else 0
    attachments = tuple(
        Attachment(
            kind=kind_for(form.get(f"MediaContentType{i}")),
            ref=form[f"MediaUrl{i}"],
            mime_type=form.get(f"MediaContentType{i}"),
            name=media_name(i, form.get(f"MediaContentType{i}")),
        )
        for i in range(min(count, MAX_MEDIA))
        if form.get(f"MediaUrl{i}")
    )
    return InboundMessage(
        platform="sms",
        chat_id=sender,
        account=f"sms:{sender}",
        platform_message_id=form["MessageSid"],
        text=form.get("Body", ""),
        attachments=attachments,
    )


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()

    @router.post(PATH)
    async def sms_webhook(request: Request, background: BackgroundTasks) -> Response:
        sid, token, url = configured(rt)
        body = await read_body(request, MAX_PAYLOAD_BYTES)
        params = parse_form(body)
        if request.url.query:
            url += "?" + request.url.query
        verify(token, url, params, request.headers.get(SIGNATURE_HEADER, ""))
        message = to_message(dict(params), sid)
        status = "ignored"
        if message is not None and (message.text.strip() or message.attachments):
            status = (await accept(rt, message, background)).status
        return Response(TWIML_EMPTY, media_type="text/xml", headers={"X-Iris-Status": status})

    return router
