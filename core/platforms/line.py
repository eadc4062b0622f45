"""Outbound LINE (Messaging API): replies with the channel access token, over httpx (imported
on first send).

A reply is split into text messages of at most 5,000 characters, sent five to an API call (the
Messaging API's limits). The first call answers the event's ``replyToken`` when the token is
fresh (used within ``REPLY_WINDOW`` of the event, on the delivery's first attempt: a token is
single-use and expires about a minute after the event); every other call, and any call whose
token LINE refuses, is a push (``POST /v2/bot/message/push``) with an ``X-Line-Retry-Key``
derived from the delivery and the call's position, so a retried push is answered 409 by LINE
instead of sent twice. The reply call itself takes no retry key (LINE refuses one there): a
reply LINE accepted but whose answer was lost on the wire is sent again by push on the retry —
the one case where a LINE answer can arrive twice. A ``clarify`` question's choices are quick-
reply buttons (postback actions) on the last message (``core.platforms.line_buttons``).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.contracts.senders import DeliveryFailed
from core.errors import IrisUsageError
from core.platforms.format_plain import render_block
from core.platforms.line_buttons import quick_reply
from core.platforms.offload import formatted
from core.platforms.spec import ChatAddress, PlatformSpec, same_chat_id
from core.platforms.split import Part, split_message

if TYPE_CHECKING:
    from core.config import Settings
    from core.messages import InboundMessage
    from core.store.deliveries import Delivery

MESSAGE_LIMIT = 5000
MESSAGES_PER_CALL = 5
REPLY_WINDOW = 50.0  # seconds after the event; LINE's tokens last about a minute
DEFAULT_API_BASE = "https://api.line.me"
DEFAULT_DATA_API_BASE = "https://api-data.line.me"
RETRY_NAMESPACE = uuid.UUID("3f0c39a4-7a1e-4c55-9d0b-6c1b1f7e2a10")


class LineSender:
    def __init__(
        self,
        token: str,
        api_base: str | None = None,
        data_api_base: str | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.token = token
        self.api_base = (api_base or DEFAULT_API_BASE).rstrip("/")
        self.data_api_base = (data_api_base or DEFAULT_DATA_API_BASE).rstrip("/")
        self.now = now

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def parts(self, text: str) -> list[Part]:
        return split_message(text, MESSAGE_LIMIT, render_block)

    def fresh_token(self, target: dict[str, Any]) -> str | None:
        token = target.get("reply_token")
        sent_ms = target.get("event_ms")
        if not isinstance(token, str) or not isinstance(sent_ms, int):
            return None
        return token if self.now() - sent_ms / 1000 <= REPLY_WINDOW else None

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        """An answer outside the delivery table (a stranger's pairing code): once, best effort."""
        return await self._deliver(target, text, key=None, first_attempt=True)

    async def send_record(self, delivery: Delivery) -> list[str]:
        return await self._deliver(
            delivery.target,
            delivery.text,
            key=f"{delivery.user_id}:{delivery.id}",
            first_attempt=delivery.attempts <= 1,
        )

    async def _deliver(
        self, target: dict[str, Any], text: str, *, key: str | None, first_attempt: bool
    ) -> list[str]:
        parts = await formatted(self.parts, text)
        messages: list[dict[str, Any]] = [{"type": "text", "text": p.rendered} for p in parts]
        choices = target.get("choices")
        if choices and messages:
            messages[-1]["quickReply"] = quick_reply(choices)
        token = self.fresh_token(target) if first_attempt else None
        ids: list[str] = []
        for n, start in enumerate(range(0, len(messages), MESSAGES_PER_CALL)):
            batch = messages[start : start + MESSAGES_PER_CALL]
            if n == 0 and token is not None:
                sent = await self._call(
                    "reply", {"replyToken": token, "messages": batch}, refused_token_ok=True
                )
                if sent is not None:
                    ids += sent
                    continue
            retry_key = str(uuid.uuid5(RETRY_NAMESPACE, f"{key}:{n}")) if key else None
            sent = await self._call(
                "push", {"to": str(target["chat_id"]), "messages": batch}, retry_key=retry_key
            )
            ids += sent or []
        return ids

    async def _call(
        self,
        kind: str,
        body: dict[str, Any],
        *,
        retry_key: str | None = None,
        refused_token_ok: bool = False,
    ) -> list[str] | None:
        """POST /v2/bot/message/{kind}; the sent messages' ids, or None when a reply token was
        refused (expired or used) and ``refused_token_ok``."""
        import httpx

        from core.tls import tls_client

        headers = self._headers()
        if retry_key is not None:
            headers["X-Line-Retry-Key"] = retry_key
        url = f"{self.api_base}/v2/bot/message/{kind}"
        try:
            async with tls_client(timeout=15.0) as http:
                response = await http.post(url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"LINE unreachable: {type(exc).__name__}: {exc}") from exc
        data = _json(response)
        status = response.status_code
        if status == 200 or (status == 409 and retry_key is not None):
            # 409: this retry key was accepted before; the messages went out then
            found = data.get("sentMessages")
            sent = found if isinstance(found, list) else []
            ids = [str(m.get("id")) for m in sent if isinstance(m, dict)]
            return ids or [
                response.headers.get("x-line-accepted-request-id")
                or response.headers.get("x-line-request-id")
                or "line"
            ]
        message = f"LINE {kind} error {status}: {data.get('message') or response.text[:200]}"
        if refused_token_ok and status == 400 and "reply token" in message.lower():
            return None
        if status == 429 or status >= 500:
            after = response.headers.get("retry-after")
            raise DeliveryFailed(
                message, retry_after=float(after) if after and after.isdigit() else None
            )
        raise DeliveryFailed(message, retryable=False)

    async def download(self, message_id: str) -> bytes:
        """The content of an image or file a person sent
        (``GET {data api}/v2/bot/message/{messageId}/content``), capped as all media."""

        from core.platforms.media import fetch_capped
        from core.tls import tls_client

        if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", message_id):
            raise DeliveryFailed(f"not a LINE message id: {message_id!r}", retryable=False)
        async with tls_client(timeout=30.0) as http:
            body, _ = await fetch_capped(
                http,
                f"{self.data_api_base}/v2/bot/message/{message_id}/content",
                headers=self._headers(),
                what="the LINE content",
            )
            return body


def _json(response: Any) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _sender(settings: Settings) -> LineSender | None:
    token = settings.secret("line_channel_access_token")
    if not token:
        return None
    return LineSender(token, settings.line_api_base, settings.line_data_api_base)


def _chat(chat_id: str) -> ChatAddress:
    return ChatAddress(
        f"line:{chat_id}", {"chat_id": chat_id, "thread_id": None}, f"line:{chat_id}"
    )


def chat_address(message: InboundMessage) -> ChatAddress:
    return _chat(message.chat_id)


CHAT_HELP = "line:<user, group or room id>, e.g. line:U4af4980629a1b2c3d4e5f60718293a4b"


def parse_chat(rest: str) -> ChatAddress:
    ident = rest.strip()
    if not re.fullmatch(r"[UCR][0-9a-f]{32}", ident):
        raise IrisUsageError(f"not a LINE chat: line:{rest} (expected {CHAT_HELP})")
    return _chat(ident)


SPEC = PlatformSpec(
    name="line",
    push=True,
    interactive=True,
    webhook="functions.line",
    sender=_sender,
    prompt_hint="You are talking on LINE: plain text, no Markdown; keep answers short.",
    chat_address=chat_address,
    parse_chat=parse_chat,
    same_chat=same_chat_id,
    chat_help=CHAT_HELP,
)
