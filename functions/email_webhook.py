"""``POST /email/inbound``: email in, two ways.

- A raw RFC 822 message (``Content-Type: message/rfc822``) with ``Authorization: Bearer
  IRIS_EMAIL_INBOUND_SECRET``, from any relay that can post one (a Cloudflare Email Worker,
  an SES → Lambda hop, Postfix piping to curl).
- Mailgun's route forwarding (form fields, ``forward("…/email/inbound")``; with a URL ending
  in ``mime`` Mailgun sends ``body-mime`` instead), signed with an HMAC of ``timestamp + token``
  under ``IRIS_EMAIL_MAILGUN_SIGNING_KEY``; stale timestamps are refused as replays.

Attachments (in the MIME message, or Mailgun's ``attachment-N`` form files) up to ten per mail
and 20 MB each are kept in the owner's object store once the sender is known to be allowed, and
read by the turn through the email sender's ``download``; a body over ``MAX_MAIL_BYTES`` is
refused with 413 while it streams in, never held whole.

The secret or signature is checked before anything else is read; mail the provider marks as
failing SPF or DKIM is refused with 406 (Mailgun does not retry a 406) and stores nothing. Each
message is recorded once (its Message-ID) and its thread dispatched; the turn runs after the ack.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import replace
from email.utils import parseaddr
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import JSONResponse

from core.ids import new_id
from core.lanes import blocking
from core.messages import Attachment, InboundMessage
from core.parsers.runner import ParseLimits, ParserCrashed, ParseRefused, parse
from core.platforms.email_inbound import (
    Mail,
    MailFile,
    attachment_key,
    ids,
    is_automatic,
    mail_file,
    parse_mail,
    read_rfc822,
)
from functions.auth import ApiError
from functions.runtime import Runtime
from functions.webhooks import accept, read_body

MAX_MAIL_BYTES = 32 * 1024 * 1024  # a 20 MB attachment is about 27 MB once base64-encoded
MAX_SIGNATURE_AGE = 300


def _form(body: bytes, content_type: str) -> dict[str, Any]:
    """Form fields; files as ``{"filename", "content_type", "data"}``."""
    if content_type.startswith("application/x-www-form-urlencoded"):
        try:
            return {k: v[0] for k, v in parse_qs(body.decode(), keep_blank_values=True).items()}
        except (UnicodeDecodeError, ValueError):
            raise ApiError(400, "not a form body", code="bad_email_request") from None
    if content_type.startswith("multipart/form-data"):
        from email import policy
        from email.parser import BytesParser

        head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
        parsed = BytesParser(policy=policy.default).parsebytes(head + body)
        fields: dict[str, Any] = {}
        for part in parsed.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if not isinstance(name, str):
                continue
            filename = part.get_filename()
            payload = part.get_payload(decode=True)
            raw = payload if isinstance(payload, bytes) else b""
            if filename is not None:
                fields[name] = {"filename": filename, "content_type": part.get_content_type(),
                                "data": raw}
            else:
                fields[name] = raw.decode(part.get_content_charset() or "utf-8", "replace")
        return fields
    raise ApiError(415, "send message/rfc822 (with the bearer secret) or Mailgun's form post",
                   code="unsupported_media_type")


def check_mailgun(key: str, form: dict[str, Any], *, now: float) -> None:
    timestamp, token = str(form.get("timestamp", "")), str(form.get("token", ""))
    signature = str(form.get("signature", ""))
    if not re.fullmatch(r"\d{1,12}", timestamp) or not token or not signature:
        raise ApiError(401, "missing Mailgun signature fields", code="bad_signature",
                       kind="authentication_error")
    expected = hmac.new(key.encode(), (timestamp + token).encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode("latin-1", "replace")):
        raise ApiError(401, "invalid Mailgun signature", code="bad_signature",
                       kind="authentication_error")
    if abs(now - int(timestamp)) > MAX_SIGNATURE_AGE:
        raise ApiError(401, "stale Mailgun timestamp", code="bad_signature",
                       kind="authentication_error")


def _mailgun_auth(form: dict[str, Any]) -> str | None:
    if str(form.get("X-Mailgun-Spf", "")).lower() in ("fail", "softfail"):
        return "SPF check failed"
    if str(form.get("X-Mailgun-Dkim-Check-Result", "")).lower() == "fail":
        return "DKIM check failed"
    return None


def mail_from_mailgun(form: dict[str, Any], authserv_id: str | None = None) -> Mail:
    if isinstance(form.get("body-mime"), str):
        mail = read_rfc822(form["body-mime"].encode(), authserv_id)
        failure = _mailgun_auth(form) or mail.auth_failure
        return replace(mail, auth_failure=failure)
    headers: dict[str, str] = {}
    try:
        for name, value in json.loads(str(form.get("message-headers") or "[]")):
            headers.setdefault(str(name).lower(), str(value))
    except (ValueError, TypeError):
        raise ApiError(400, "message-headers is not a JSON list of pairs",
                       code="bad_email_request") from None
    name, address = parseaddr(str(form.get("from") or ""))
    stripped = form.get("stripped-text")
    message_id = ids(str(form.get("Message-Id") or headers.get("message-id", "")))
    if not message_id:
        raise ApiError(400, "the mail has no Message-Id", code="bad_email_request")
    attachments = _mailgun_files(form)
    return Mail(
        sender=str(form.get("sender") or address), name=name or None,
        subject=str(form.get("subject") or ""), message_id=message_id[0],
        in_reply_to=ids(headers.get("in-reply-to")), references=ids(headers.get("references")),
        text=str(stripped if isinstance(stripped, str) else form.get("body-plain") or ""),
        already_stripped=isinstance(stripped, str), auth_failure=_mailgun_auth(form),
        attachments=attachments,
        automatic=is_automatic(headers.get("auto-submitted"), headers.get("precedence")),
    )


def _mailgun_files(form: dict[str, Any]) -> list[MailFile]:
    """``attachment-1`` … ``attachment-N`` in order (Mailgun's parsed route post)."""
    numbered = sorted((int(k.split("-", 1)[1]), v) for k, v in form.items()
                      if re.fullmatch(r"attachment-\d{1,4}", k) and isinstance(v, dict))
    return [mail_file(v["filename"], v.get("content_type") or "application/octet-stream",
                      v.get("data") or b"", n) for n, v in numbered]


def keep_attachments(rt: Runtime, mail: Mail) -> Any:
    """``prepare`` for ``accept``: store each attachment the message reads under its owner and
    point the attachment at it (``<owner>/<key>``, read back by ``EmailSender.download``). Each
    is noted with its time; the sweep deletes it after ``email_attachment_days``."""

    async def prepare(owner: str, message: InboundMessage) -> InboundMessage:
        def store() -> tuple[Attachment, ...]:
            kept = []
            for attachment in message.attachments:
                index = int(attachment.ref.removeprefix("part:"))
                data = mail.attachments[index - 1].data
                key = attachment_key(mail.message_id, index)
                if data is None:
                    continue
                rt.store.kept_attachments.keep(owner, key)  # noted first: never an untimed object
                if rt.store.objects.head(owner, key) is None:
                    rt.store.objects.put(owner, key, data)
                kept.append(replace(attachment, ref=f"{owner}/{key}"))
            return tuple(kept)

        if not message.attachments:
            return message
        return replace(message, attachments=await blocking("io", owner, store,
                                                           what="keeping the attachments"))

    return prepare


class EmailEndpoint:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def _raw(self, request: Request) -> None:
        secret = self.rt.settings.secret("email_inbound_secret")
        if not secret:
            raise ApiError(404, "raw inbound mail is off: set IRIS_EMAIL_INBOUND_SECRET",
                           code="email_disabled")
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
                token.strip().encode("latin-1", "replace"), secret.encode()):
            raise ApiError(401, "missing or wrong bearer secret", code="bad_secret",
                           kind="authentication_error")

    async def handle(self, request: Request, background: BackgroundTasks) -> JSONResponse:
        content_type = request.headers.get("content-type", "").lower()
        if content_type.startswith("message/rfc822"):
            self._raw(request)
            # parsing a large mail takes seconds: never on the event loop; each mail is its
            # own work (the sender is not known before it is parsed)
            mail = await blocking("parse", new_id("mail"), read_rfc822,
                                  await read_body(request, MAX_MAIL_BYTES),
                                  self.rt.settings.email_authserv_id, what="reading the mail")
        else:
            key = self.rt.settings.secret("email_mailgun_signing_key")
            if not key:
                raise ApiError(404, "Mailgun inbound is off: set IRIS_EMAIL_MAILGUN_SIGNING_KEY"
                               " (or post message/rfc822 with the bearer secret)",
                               code="email_disabled")
            body = await read_body(request, MAX_MAIL_BYTES)
            work = new_id("mail")
            form = await blocking("parse", work, _form, body, content_type, what="reading the form")
            check_mailgun(key, form, now=self.rt.store.clock.now())
            mail = await blocking("parse", work, mail_from_mailgun, form,
                                  self.rt.settings.email_authserv_id, what="reading the mail")
        if mail.html and not mail.auth_failure and not mail.automatic:
            mail = await self._read_html(mail)
        parsed = parse_mail(mail)
        own = self.rt.settings.email_from
        if own and mail.sender.strip().lower() == own.lower():
            return JSONResponse({"ok": True, "status": "ignored", "reason": "Iris' own mail"})
        if parsed.message is None:
            status = 406 if mail.auth_failure else 200
            return JSONResponse({"ok": status == 200, "status": "ignored",
                                 "reason": parsed.reason}, status_code=status)
        outcome = await accept(self.rt, parsed.message, background, instead=parsed.reply,
                               prepare=keep_attachments(self.rt, mail))
        return JSONResponse({"ok": True, "status": outcome.status})


    async def _read_html(self, mail: Mail) -> Mail:
        """An HTML-only body read in a parsing child with limits (core/parsers): a hostile
        body costs that child, never the server; one child at a time per sender."""
        limits = ParseLimits.from_settings(self.rt.settings)
        try:
            read = await parse("mail", mail.html.encode("utf-8", "replace"),
                               user_id=f"email:{mail.sender.strip().lower()}", limits=limits,
                               charset="utf-8")
        except (ParseRefused, ParserCrashed):
            return replace(mail, html="", text="[the mail's HTML body could not be read]")
        note = read.cut_note("mail")
        text = f"{read.text}\n\n{note}" if note else read.text
        return replace(mail, html="", text=text)


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()
    endpoint = EmailEndpoint(rt)

    @router.post("/email/inbound")
    async def email_inbound(request: Request, background: BackgroundTasks) -> JSONResponse:
        return await endpoint.handle(request, background)

    return router
