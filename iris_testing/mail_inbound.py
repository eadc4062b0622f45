"""Inbound mail as providers post it to Iris: a raw RFC 822 message, and Mailgun's route
forwarding (form fields with ``timestamp``, ``token`` and their HMAC ``signature``;
``message-headers`` as a JSON list of pairs; ``stripped-text``; ``X-Mailgun-Spf`` and
``X-Mailgun-Dkim-Check-Result``; with attachments, a multipart post whose files are
``attachment-1`` … ``attachment-N`` and ``attachment-count`` says how many)."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import secrets
import time
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import formatdate
from typing import Any

_ids = itertools.count(1)
RECEIVER = "mx.iris.example.net"  # the authserv-id of the service receiving Iris' mail


def new_message_id(domain: str = "mail.example.com") -> str:
    return f"CAF{next(_ids):08d}x{secrets.token_hex(4)}@{domain}"


def raw_mail(text: str, *, sender: str = "Ada Lovelace <ada@example.com>",
             to: str = "iris@iris.example.net", subject: str = "Hello Iris",
             message_id: str | None = None, in_reply_to: str | None = None,
             references: list[str] | None = None, auth: str = "spf=pass dkim=pass dmarc=pass",
             authserv_id: str = RECEIVER, attachment: tuple[str, bytes] | None = None,
             html: str | None = None,
             attachments: Sequence[tuple[str, bytes, str]] = ()) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = f"<{message_id or new_message_id()}>"
    if in_reply_to:
        message["In-Reply-To"] = f"<{in_reply_to}>"
    if references:
        message["References"] = " ".join(f"<{r}>" for r in references)
    if auth:
        message["Authentication-Results"] = f"{authserv_id}; {auth}"
    message.set_content(text)
    if html is not None:
        message.add_alternative(html, subtype="html")
    if attachment is not None:
        message.add_attachment(attachment[1], maintype="application", subtype="pdf",
                               filename=attachment[0])
    for name, data, mime in attachments:
        maintype, subtype = mime.split("/", 1)
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return bytes(message)


def as_received(raw: bytes, auth: str, *, authserv_id: str = RECEIVER) -> bytes:
    """``raw`` as a receiving service hands it on: its own ``Authentication-Results`` prepended
    above every header the sender wrote (RFC 8601 section 7.1), so ``raw``'s own ones (pass
    ``raw_mail(auth="")`` for none) are the sender's."""
    newline = b"\r\n" if b"\r\n" in raw else b"\n"
    return f"Authentication-Results: {authserv_id}; {auth}".encode() + newline + raw


def mailgun_files(attachments: Sequence[tuple[str, bytes, str]]) -> dict[str, Any]:
    """The files of a parsed route post, as ``httpx`` sends them (use with ``mailgun_form(...,
    attachment_count=len(attachments))``)."""
    return {f"attachment-{n}": (name, data, mime)
            for n, (name, data, mime) in enumerate(attachments, start=1)}


def mailgun_form(text: str, *, key: str, sender: str = "ada@example.com",
                 subject: str = "Hello Iris", message_id: str | None = None,
                 in_reply_to: str | None = None, references: list[str] | None = None,
                 spf: str = "Pass", dkim: str = "Pass", timestamp: int | None = None,
                 stripped: str | None = None, attachment_count: int = 0) -> dict[str, str]:
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    token = secrets.token_hex(25)
    mid = message_id or new_message_id()
    headers = [["From", f"Ada Lovelace <{sender}>"], ["Subject", subject],
               ["Message-Id", f"<{mid}>"]]
    if in_reply_to:
        headers.append(["In-Reply-To", f"<{in_reply_to}>"])
    if references:
        headers.append(["References", " ".join(f"<{r}>" for r in references)])
    return {
        "recipient": "iris@iris.example.net", "sender": sender,
        "from": f"Ada Lovelace <{sender}>", "subject": subject, "body-plain": text,
        "stripped-text": stripped if stripped is not None else text,
        "stripped-signature": "", "Message-Id": f"<{mid}>",
        "message-headers": json.dumps(headers), "X-Mailgun-Spf": spf,
        "X-Mailgun-Dkim-Check-Result": dkim, "attachment-count": str(attachment_count),
        "timestamp": stamp, "token": token, "signature": mailgun_signature(key, stamp, token),
    }


def mailgun_signature(key: str, timestamp: str, token: str) -> str:
    return hmac.new(key.encode(), (timestamp + token).encode(), hashlib.sha256).hexdigest()


def header_ids(message: Any, name: str) -> list[str]:
    return [part.strip("<>") for part in str(message.get(name, "")).split()]
