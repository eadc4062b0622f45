"""Inbound email → ``InboundMessage``. A conversation is an email thread: its chat is named
after the thread's first Message-ID (the first of ``References``, else ``In-Reply-To``, else the
message's own), or after the chat an Iris reply named in its own Message-ID, so a reply from a
client that keeps only ``In-Reply-To`` stays in its thread. Quoted history and signatures are cut
before the text reaches the model; mail the provider marks as failing SPF, DKIM or DMARC is
refused, read from the ``Authentication-Results`` the receiving service wrote (never one the
sender added).
Attachments (up to ten, each up to 20 MB) become image or file attachments; the webhook keeps
their bytes in the owner's object store until the turn reads them (``attachment_key``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parseaddr

from core.messages import Attachment, InboundMessage
from core.platforms.email_auth import auth_failure
from core.platforms.inbound import Parsed
from core.platforms.media import (
    MAX_ATTACHMENTS,
    MAX_MEDIA_BYTES,
    kind_for,
    over_limit_note,
    too_big,
)

MSG_ID = re.compile(r"<([^<>\s]{1,500})>")
IRIS_ID = re.compile(r"^iris\.(t[0-9a-f]{20})\.")
ADDRESS = re.compile(r"^[^@\s<>]{1,200}@[^@\s<>]{1,200}$")
QUOTE_HEADER = re.compile(
    r"^(On\b.{0,300}\bwrote:|Am\b.{0,300}\bschrieb.{0,40}:|Le\b.{0,300}\ba écrit\s?:"
    r"|-{2,}\s*Original Message\s*-{2,}|_{10,}|From:\s.+)\s*$", re.I)
ATTACHMENT_KEY = re.compile(r"^inbound/email/[0-9a-f]{32}/\d{1,3}$")


@dataclass(frozen=True)
class MailFile:
    """One attachment: its bytes, or None when it is over the size cap (``size`` says)."""

    name: str
    mime_type: str
    data: bytes | None
    size: int


def mail_file(name: str | None, mime_type: str, data: bytes, index: int) -> MailFile:
    kept = data if len(data) <= MAX_MEDIA_BYTES else None
    return MailFile(name or f"attachment-{index}", mime_type, kept, len(data))


def attachment_key(message_id: str, index: int) -> str:
    """Where the webhook keeps a mail's attachment in its owner's object store."""
    digest = hashlib.sha256(message_id.encode()).hexdigest()[:32]
    return f"inbound/email/{digest}/{index}"


@dataclass(frozen=True)
class Mail:
    """What Iris reads of an email, whichever way it arrived."""

    sender: str
    name: str | None
    subject: str
    message_id: str
    in_reply_to: list[str]
    references: list[str]
    text: str
    already_stripped: bool = False
    auth_failure: str | None = None
    attachments: list[MailFile] = field(default_factory=list)
    to: list[str] = field(default_factory=list)
    automatic: bool = False  # an auto-reply, bounce or list mail: never answered (mail loops)
    html: str = ""  # an HTML-only body, not yet read: the webhook reads it in a parsing child


def is_automatic(auto_submitted: str | None, precedence: str | None) -> bool:
    """RFC 3834's ``Auto-Submitted`` (anything but ``no``) and the older ``Precedence``."""
    auto = (auto_submitted or "").strip().lower()
    return (bool(auto) and auto != "no") or (precedence or "").strip().lower() in (
        "bulk", "junk", "list", "auto_reply")


def ids(value: str | None) -> list[str]:
    return MSG_ID.findall(value or "")


def strip_reply(text: str) -> str:
    """The new part of a reply: no quoted lines, no quoted history, no signature."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.rstrip() in ("--", "-- ") or QUOTE_HEADER.match(line.strip()):
            break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def read_rfc822(raw: bytes, authserv_id: str | None = None) -> Mail:
    """``authserv_id``: whose ``Authentication-Results`` to trust (``auth_failure``)."""
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    name, sender = parseaddr(str(message.get("From", "")))
    body = message.get_body(preferencelist=("plain", "html"))
    text = html = ""
    if body is not None:
        content = body.get_content()
        if body.get_content_subtype() == "html":
            html = content  # read later in a parsing child, with limits (core/parsers)
        else:
            text = content
    attachments: list[MailFile] = []
    for index, part in enumerate(message.iter_attachments(), start=1):
        if index > MAX_ATTACHMENTS:  # named to the model, never decoded
            attachments.append(MailFile(part.get_filename() or f"attachment-{index}",
                                        part.get_content_type(), None, 0))
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        attachments.append(mail_file(part.get_filename(), part.get_content_type(), data, index))
    own = ids(str(message.get("Message-ID", "")))
    message_id = own[0] if own else "sha256:" + hashlib.sha256(raw).hexdigest()[:32]
    return Mail(
        sender=sender, name=name or None, subject=str(message.get("Subject", "")),
        message_id=message_id, in_reply_to=ids(str(message.get("In-Reply-To", ""))),
        references=ids(str(message.get("References", ""))), text=text,
        auth_failure=auth_failure([str(v) for v in message.get_all(
            "Authentication-Results", [])], authserv_id),
        attachments=attachments,
        to=[addr for _, addr in getaddresses([str(v) for v in message.get_all("To", [])])],
        automatic=is_automatic(message.get("Auto-Submitted"), message.get("Precedence")),
        html=html,
    )


def thread_of(mail: Mail) -> str:
    """The chat id of the mail's thread."""
    for ref in [*mail.in_reply_to, *mail.references]:
        if match := IRIS_ID.match(ref):
            return match.group(1)
    root = (mail.references or mail.in_reply_to or [mail.message_id])[0]
    return "t" + hashlib.sha256(root.lower().encode()).hexdigest()[:20]


def parse_mail(mail: Mail) -> Parsed:
    sender = mail.sender.strip().lower()
    if not ADDRESS.match(sender):
        return Parsed(reason="no sender address")
    if mail.auth_failure:
        return Parsed(reason=f"refused: {mail.auth_failure}")
    if mail.automatic:
        return Parsed(reason="an automatic mail (auto-reply, bounce or list)")
    text = mail.text if mail.already_stripped else strip_reply(mail.text)
    is_reply = bool(mail.in_reply_to or mail.references)
    subject = mail.subject.strip()
    if subject and not is_reply and text and not text.startswith("/"):
        text = f"Subject: {subject}\n\n{text}"
    attachments, note = _attachments(mail)
    if note:
        text = f"{text}\n\n{note}" if text.strip() else note
    if not text.strip() and not attachments:
        return Parsed(reason="nothing to read")
    chat = thread_of(mail)
    message = InboundMessage(
        platform="email", chat_id=chat, account=f"email:{sender}",
        platform_message_id=f"{sender}:{mail.message_id}", text=text, display_name=mail.name,
        attachments=attachments,
        meta={"to": sender, "subject": subject, "message_id": mail.message_id,
              "references": [*mail.references[-20:], mail.message_id]
              if mail.references else [*mail.in_reply_to[-1:], mail.message_id]},
    )
    return Parsed(message=message)


def _attachments(mail: Mail) -> tuple[tuple[Attachment, ...], str]:
    """Attachments to read (``ref`` is the part's number until the webhook stores it, see
    ``attachment_key``) and a note naming the ones refused."""
    found: list[Attachment] = []
    notes: list[str] = []
    for index, part in enumerate(mail.attachments[:MAX_ATTACHMENTS], start=1):
        if part.data is None:
            notes.append(f"[the user attached {part.name!r}, which was not saved: "
                         f"{too_big(part.size)}]")
            continue
        found.append(Attachment(kind=kind_for(part.mime_type), ref=f"part:{index}",
                                mime_type=part.mime_type, name=part.name))
    if len(mail.attachments) > MAX_ATTACHMENTS:
        notes.append(over_limit_note([p.name for p in mail.attachments[MAX_ATTACHMENTS:]]))
    return tuple(found), "\n".join(notes)
