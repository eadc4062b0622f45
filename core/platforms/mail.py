"""Outbound email through SMTP (``IRIS_EMAIL_SMTP_URL``, ``IRIS_EMAIL_FROM``), with smtplib in a
thread. ``smtp://user:pass@host:587`` upgrades with STARTTLS when the server offers it and
refuses to send in the clear unless the host is loopback; ``smtps://…:465`` is TLS from the
start. A reply is threaded (``In-Reply-To``, ``References``, ``Re:`` subject) and carries the
Markdown as its plain-text part and a simple HTML part. Its Message-ID is derived from the
reply itself, so a retried send carries the same id (mail clients show one message), and it
names the thread's chat, so a reply to it finds the thread even without ``References``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from core.contracts.senders import DeliveryFailed
from core.errors import ConfigError, IrisUsageError
from core.lanes import blocking
from core.platforms.format_email import to_email_html
from core.platforms.offload import formatted
from core.platforms.spec import ChatAddress, PlatformSpec

if TYPE_CHECKING:
    from collections.abc import Callable
    from email.message import EmailMessage

    from core.config import Settings
    from core.messages import InboundMessage
    from core.store.objects_base import ObjectStore

ADDRESS = re.compile(r"^[^@\s<>]{1,200}@[^@\s<>]{1,200}$")
TIMEOUT = 30.0


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    implicit_tls: bool
    user: str | None = None
    password: str | None = None

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_smtp_url(url: str) -> SmtpServer:
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ConfigError("IRIS_EMAIL_SMTP_URL", "must look like smtp://user:pass@host:587 or "
                          "smtps://user:pass@host:465")
    implicit = parts.scheme == "smtps"
    try:
        port = parts.port or (465 if implicit else 587)
    except ValueError:
        raise ConfigError("IRIS_EMAIL_SMTP_URL", "the port is not a number") from None
    return SmtpServer(parts.hostname, port, implicit,
                      unquote(parts.username) if parts.username else None,
                      unquote(parts.password) if parts.password else None)


def _subject(subject: str) -> str:
    subject = subject.strip() or "Iris"
    return subject if re.match(r"^re:", subject, re.I) else f"Re: {subject}"


class EmailSender:
    def __init__(self, server: SmtpServer, sender: str,
                 objects: Callable[[], ObjectStore] | None = None) -> None:
        self.server = server
        self.sender = sender
        self.domain = sender.rsplit("@", 1)[-1]
        self._objects = objects

    async def download(self, ref: str) -> bytes:
        """An attachment the inbound webhook kept: ``<owner>/inbound/email/<digest>/<n>`` in the
        owner's object store (the ref is Iris' own, written into the owner's inbox)."""
        from core.intake.documents import DocumentRefused
        from core.platforms.email_inbound import ATTACHMENT_KEY

        owner, _, key = ref.partition("/")
        if self._objects is None or not ATTACHMENT_KEY.match(key):
            raise DocumentRefused("not an attachment Iris kept")
        from core.store.objects_base import ObjectNotFound

        objects = self._objects()
        try:
            return (await blocking("io", owner, objects.get, owner, key,
                                   what="reading the attachment")).data
        except ObjectNotFound:
            raise DocumentRefused("the attachment is no longer kept: email attachments are "
                                  "deleted after email_attachment_days") from None

    def compose(self, target: dict[str, Any], text: str) -> EmailMessage:
        from email.message import EmailMessage
        from email.utils import formatdate

        to = str(target.get("to") or "")
        if not ADDRESS.match(to):
            raise DeliveryFailed(f"not an email address: {to!r}", retryable=False)
        parent = target.get("message_id")
        digest = hashlib.sha256(f"{to}\n{parent}\n{text}".encode()).hexdigest()[:24]
        chat = str(target.get("chat_id") or "t")
        message = EmailMessage()
        message["From"] = f"Iris <{self.sender}>"
        message["To"] = to
        message["Subject"] = _subject(str(target.get("subject") or ""))
        message["Date"] = formatdate(usegmt=True)
        message["Message-ID"] = f"<iris.{chat}.{digest}@{self.domain}>"
        if parent:
            message["In-Reply-To"] = f"<{parent}>"
            refs = [str(r) for r in target.get("references") or [parent]][-20:]
            message["References"] = " ".join(f"<{r}>" for r in refs)
        message["Auto-Submitted"] = "auto-replied"
        message.set_content(text)
        message.add_alternative(to_email_html(text), subtype="html")
        return message

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        message = await formatted(partial(self.compose, target), text)
        await blocking("io", f"mail:{message['To']}", self._deliver, message,
                       what="sending the email")
        return [str(message["Message-ID"]).strip("<>")]

    def _deliver(self, message: EmailMessage) -> None:
        import smtplib
        import ssl

        server = self.server
        context = ssl.create_default_context()
        try:
            if server.implicit_tls:
                smtp: smtplib.SMTP = smtplib.SMTP_SSL(server.host, server.port, timeout=TIMEOUT,
                                                      context=context)
            else:
                smtp = smtplib.SMTP(server.host, server.port, timeout=TIMEOUT)
            with smtp:
                smtp.ehlo()
                if not server.implicit_tls:
                    if smtp.has_extn("starttls"):
                        smtp.starttls(context=context)
                        smtp.ehlo()
                    elif not server.loopback:
                        raise DeliveryFailed(
                            f"{server.host} does not offer STARTTLS; Iris will not send mail "
                            "in the clear (use smtps:// or a server with STARTTLS)",
                            retryable=False)
                if server.user:
                    smtp.login(server.user, server.password or "")
                smtp.send_message(message)
        except DeliveryFailed:
            raise
        except smtplib.SMTPAuthenticationError as exc:
            raise DeliveryFailed(f"SMTP login refused: {exc.smtp_code}", retryable=False) from exc
        except smtplib.SMTPRecipientsRefused as exc:
            codes = [code for code, _ in exc.recipients.values()]
            raise DeliveryFailed(f"SMTP refused the recipient: {codes}",
                                 retryable=all(400 <= c < 500 for c in codes)) from exc
        except smtplib.SMTPResponseException as exc:
            raise DeliveryFailed(f"SMTP error {exc.smtp_code}: {exc.smtp_error!r}",
                                 retryable=400 <= exc.smtp_code < 500) from exc
        except (smtplib.SMTPException, OSError, ssl.SSLError) as exc:
            raise DeliveryFailed(f"SMTP server unreachable: {type(exc).__name__}: {exc}") from exc


def _sender(settings: Settings) -> EmailSender | None:
    url = settings.secret("email_smtp_url")
    if not url or not settings.email_from:
        return None
    opened: list[ObjectStore] = []

    def objects() -> ObjectStore:
        if not opened:
            from core.store.objects import open_object_store

            opened.append(open_object_store(
                settings.objects_url, s3_endpoint_url=settings.s3_endpoint_url,
                s3_region=settings.s3_region, s3_timeout=settings.s3_timeout,
                s3_checksums=(settings.s3_request_checksum_calculation,
                              settings.s3_response_checksum_validation)))
        return opened[0]

    return EmailSender(parse_smtp_url(url), settings.email_from, objects)


def chat_address(message: InboundMessage) -> ChatAddress:
    meta = message.meta
    address = {"chat_id": message.chat_id, "thread_id": None, "to": meta.get("to"),
                "subject": meta.get("subject"), "message_id": meta.get("message_id"),
                "references": meta.get("references")}
    return ChatAddress(message.chat_key, address, f"email:{meta.get('to')}")


CHAT_HELP = "email:<address>, e.g. email:ada@example.com"


def parse_chat(rest: str) -> ChatAddress:
    to = rest.strip().lower()
    if not ADDRESS.match(to):
        raise IrisUsageError(f"not an email address: email:{rest} (expected {CHAT_HELP})")
    return ChatAddress(f"email:{to}", {"chat_id": to, "thread_id": None, "to": to,
                                       "subject": "Iris"}, f"email:{to}")


def same_chat(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return str(a.get("to", "")).lower() == str(b.get("to", "")).lower()


SPEC = PlatformSpec(
    name="email", push=True, interactive=True, webhook="functions.email_webhook",
    sender=_sender,
    prompt_hint="You are answering an email: write a complete, plain reply; simple Markdown.",
    chat_address=chat_address, parse_chat=parse_chat, same_chat=same_chat, chat_help=CHAT_HELP,
)
