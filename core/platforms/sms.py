"""Outbound SMS through Twilio's Messages API: ``POST {api}/2010-04-01/Accounts/{AccountSid}/
Messages.json`` (form fields ``To``, ``From``, ``Body``; HTTP basic auth with the account SID
and auth token), over httpx (imported on first send). No Twilio SDK.

Replies are plain text. A long answer is split on paragraph boundaries into messages of at most
``SEGMENTS_PER_MESSAGE`` segments each (Twilio's advice; its hard limit is 1,600 characters),
counted by SMS rules (``core.platforms.sms_segments``: GSM-7 153, UCS-2 67 per segment); past
``sms_max_segments`` for the whole answer (default 10) the rest is cut and the last message
says so, since every segment is billed. SMS has no buttons: a ``clarify`` question's text
numbers its choices and the person answers with the number.

Twilio's Messages API takes no idempotency key: a request that timed out after Twilio accepted
it is sent again on the retry (the one way an SMS answer can arrive twice).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from core.contracts.senders import DeliveryFailed
from core.errors import IrisUsageError
from core.platforms.format_plain import render_block
from core.platforms.offload import formatted
from core.platforms.sms_segments import segments
from core.platforms.spec import ChatAddress, PlatformSpec, same_chat_id
from core.platforms.split import Part, split_message

if TYPE_CHECKING:
    from core.config import Settings
    from core.messages import InboundMessage

SEGMENTS_PER_MESSAGE = 10
BODY_LIMIT = 1600
CUT_NOTE = "\n[Cut: the answer is too long for SMS.]"
DEFAULT_API_BASE = "https://api.twilio.com"
# Twilio error codes worth another try: rate limits and queue overflows.
RETRYABLE_CODES = frozenset({20429, 30001, 14107})


def _fits(text: str) -> bool:
    return segments(text) <= SEGMENTS_PER_MESSAGE and len(text) <= BODY_LIMIT


def sms_parts(text: str, max_segments: int) -> list[Part]:
    """``text`` as messages of at most ``SEGMENTS_PER_MESSAGE`` segments, at most
    ``max_segments`` segments in all (the last one then ends with ``CUT_NOTE``)."""
    limit = BODY_LIMIT
    while True:
        parts = split_message(text, limit, render_block)
        if all(_fits(p.rendered) for p in parts) or limit <= 64:
            break
        limit = max(64, limit * 9 // 10)
    kept: list[Part] = []
    used = 0
    for part in parts:
        need = segments(part.rendered)
        if used + need <= max_segments:
            kept.append(part)
            used += need
            continue
        if used >= max_segments and kept:  # no room left: the last kept message takes the note
            part = kept.pop()
            used -= segments(part.rendered)
        budget = min(max_segments - used, SEGMENTS_PER_MESSAGE)
        cut = part.rendered
        while cut and segments(cut + CUT_NOTE) > budget:
            cut = cut[: len(cut) - 20]
        kept.append(Part(markdown=cut + CUT_NOTE, rendered=cut + CUT_NOTE))
        break
    return kept


class SmsSender:
    def __init__(
        self,
        account_sid: str,
        auth_token: str,
        from_number: str,
        api_base: str | None = None,
        max_segments: int = 10,
    ) -> None:
        self.account_sid = account_sid
        self.auth_token = auth_token
        self.from_number = from_number
        self.api_base = (api_base or DEFAULT_API_BASE).rstrip("/")
        self.max_segments = max_segments

    def parts(self, text: str) -> list[Part]:
        return sms_parts(text, self.max_segments)

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        parts = await formatted(self.parts, text)
        return [await self.send_part(target, part, i) for i, part in enumerate(parts)]

    async def send_part(self, target: dict[str, Any], part: Part, index: int) -> str:
        import httpx

        from core.tls import tls_client

        url = f"{self.api_base}/2010-04-01/Accounts/{self.account_sid}/Messages.json"
        form = {"To": str(target["chat_id"]), "From": self.from_number, "Body": part.rendered}
        try:
            async with tls_client(timeout=15.0) as http:
                response = await http.post(url, data=form, auth=(self.account_sid, self.auth_token))
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"Twilio unreachable: {type(exc).__name__}: {exc}") from exc
        data = _json(response)
        if response.status_code in (200, 201) and isinstance(data.get("sid"), str):
            return str(data["sid"])
        code = data.get("code")
        message = f"Twilio error {code}: {data.get('message') or response.status_code}"
        if response.status_code == 429 or response.status_code >= 500 or code in RETRYABLE_CODES:
            after = response.headers.get("retry-after")
            raise DeliveryFailed(
                message, retry_after=float(after) if after and after.isdigit() else None
            )
        raise DeliveryFailed(message, retryable=False)

    async def download(self, url: str) -> bytes:
        """An MMS image or document (``MediaUrlN``): fetched with the account's basic auth,
        from Twilio's own API host only (a URL elsewhere would be handed the credentials),
        within the intake's cap while streaming."""

        from core.intake.documents import DocumentRefused
        from core.platforms.media import fetch_capped
        from core.tls import tls_client

        prefix = f"{self.api_base}/2010-04-01/Accounts/{self.account_sid}/Messages/"
        if not url.startswith(prefix) or ".." in url:
            raise DocumentRefused(f"it is not a Twilio media URL of this account: {url[:200]}")
        async with tls_client(timeout=30.0, follow_redirects=False) as http:
            body, _ = await fetch_capped(
                http, url, headers={"Authorization": self._basic()}, what="the MMS media"
            )
            return body

    def _basic(self) -> str:
        import base64

        raw = f"{self.account_sid}:{self.auth_token}".encode()
        return "Basic " + base64.b64encode(raw).decode()


def _json(response: Any) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _sender(settings: Settings) -> SmsSender | None:
    sid, token = settings.twilio_account_sid, settings.secret("twilio_auth_token")
    if not sid or not token or not settings.twilio_from_number:
        return None
    return SmsSender(
        sid, token, settings.twilio_from_number, settings.twilio_api_base, settings.sms_max_segments
    )


def _chat(number: str) -> ChatAddress:
    return ChatAddress(f"sms:{number}", {"chat_id": number, "thread_id": None}, f"sms:{number}")


def chat_address(message: InboundMessage) -> ChatAddress:
    return _chat(message.chat_id)


CHAT_HELP = "sms:<number in E.164>, e.g. sms:+15551234567"


def parse_chat(rest: str) -> ChatAddress:
    number = rest.strip()
    if not re.fullmatch(r"\+[1-9]\d{4,14}", number):
        raise IrisUsageError(f"not an SMS number: sms:{rest} (expected {CHAT_HELP})")
    return _chat(number)


SPEC = PlatformSpec(
    name="sms",
    push=True,
    interactive=True,
    webhook="functions.sms",
    sender=_sender,
    prompt_hint="You are answering by SMS: plain text, no Markdown, as short as you can; "
    "every 153 characters cost a message.",
    chat_address=chat_address,
    parse_chat=parse_chat,
    same_chat=same_chat_id,
    chat_help=CHAT_HELP,
)
