"""Outbound WhatsApp (Cloud API): replies through ``POST {api_base}/{phone_number_id}/messages``
with the app's bearer token, over httpx (imported on first send).

Replies are split at WhatsApp's 4,096-character limit on paragraph boundaries and written in its
markup. WhatsApp only lets a business write to a person within 24 hours of that person's last
message (the customer-service window): ``reply_window_seconds`` tells the delivery service to
record a later delivery (a cron result) as undeliverable, with the reason, instead of retrying it.
With a template configured (``IRIS_WHATSAPP_TEMPLATE=name:language``, an approved template with
one body parameter) such a delivery is held instead: the template goes out with a short preview
of the reply as its parameter (``reopen``), and the reply is sent when the person writes back.
A ``clarify`` question goes as an interactive message, its choices as reply buttons or a list
(``core.platforms.whatsapp_buttons``); within the same window rules as any reply.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from core.contracts.senders import DeliveryFailed
from core.errors import IrisUsageError
from core.platforms.format_whatsapp import render_block
from core.platforms.offload import formatted
from core.platforms.spec import ChatAddress, PlatformSpec, same_chat_id
from core.platforms.split import Part, split_message
from core.platforms.whatsapp_buttons import question_interactive

if TYPE_CHECKING:
    from core.config import Settings
    from core.messages import InboundMessage

MESSAGE_LIMIT = 4096
DEFAULT_API_BASE = "https://graph.facebook.com/v23.0"
WINDOW_SECONDS = 24 * 3600
# Graph API error codes worth another try: throttling, "something went wrong", unavailable.
RETRYABLE_CODES = frozenset({1, 2, 4, 17, 341, 80007, 130429, 131000, 131016, 131056, 133004})
OUTSIDE_WINDOW = 131047


PREVIEW_CHARS = 60


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """A template parameter from a reply: one line (WhatsApp refuses newlines, tabs and runs of
    more than four spaces in parameters), without markup, cut at a word."""
    flat = " ".join(re.sub(r"[*_~`#>|]+", "", text).split())
    if len(flat) <= limit:
        return flat or "a new message"
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut.rstrip(" ,.;:") + "…"


class WhatsAppSender:
    reply_window_seconds = WINDOW_SECONDS

    def __init__(self, token: str, phone_number_id: str, api_base: str | None = None,
                 template: str | None = None) -> None:
        self.token = token
        self.phone_number_id = phone_number_id
        self.api_base = (api_base or DEFAULT_API_BASE).rstrip("/")
        name, _, language = (template or "").partition(":")
        self.template = (name, language) if name and language else None

    @property
    def can_reopen(self) -> bool:
        return self.template is not None

    async def reopen(self, target: dict[str, Any], text: str) -> str:
        """Send the configured template (``type: template``, one body parameter: a preview of
        the reply waiting) to reopen the conversation; returns its message id."""
        if self.template is None:
            raise DeliveryFailed("no WhatsApp template configured", retryable=False)
        name, language = self.template
        body = {
            "messaging_product": "whatsapp", "recipient_type": "individual",
            "to": str(target["chat_id"]), "type": "template",
            "template": {"name": name, "language": {"code": language}, "components": [
                {"type": "body", "parameters": [{"type": "text", "text": preview(text)}]}]},
        }
        return await self._post(body)

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def parts(self, text: str) -> list[Part]:
        return split_message(text, MESSAGE_LIMIT, render_block)

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        parts = await formatted(self.parts, text)
        return [await self.send_part(target, part, i) for i, part in enumerate(parts)]

    async def send_part(self, target: dict[str, Any], part: Part, index: int) -> str:
        choices = target.get("choices") if index == 0 else None
        buttons = question_interactive(part.rendered, choices) if choices else None
        body: dict[str, Any] = {
            "messaging_product": "whatsapp", "recipient_type": "individual",
            "to": str(target["chat_id"]), "type": "text",
            "text": {"preview_url": False, "body": part.rendered},
        }
        if buttons is not None:
            del body["text"]
            body.update(type="interactive", interactive=buttons)
        return await self._post(body)

    async def _post(self, body: dict[str, Any]) -> str:
        import httpx

        from core.tls import tls_client

        url = f"{self.api_base}/{self.phone_number_id}/messages"
        try:
            async with tls_client(timeout=15.0) as http:
                response = await http.post(url, json=body, headers=self._headers())
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"WhatsApp unreachable: {type(exc).__name__}: {exc}") from exc
        data = _json(response)
        if response.status_code != 200:
            raise failure(response.status_code, data, response.headers.get("retry-after"))
        try:
            return str(data["messages"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise DeliveryFailed(f"WhatsApp answered without a message id: {data}") from None

    async def download(self, media_id: str) -> bytes:
        """A file the person sent (voice note, image, document): its URL and size from the
        Graph API (``GET /{media-id}``), then its bytes behind the same bearer token, refused
        past 20 MB before or while downloading."""

        from core.platforms.media import MAX_MEDIA_BYTES, fetch_capped, too_big
        from core.tls import tls_client

        async with tls_client(timeout=30.0) as http:
            info = await http.get(f"{self.api_base}/{media_id}", headers=self._headers())
            data = _json(info)
            if info.status_code != 200 or not isinstance(data.get("url"), str):
                raise failure(info.status_code, data, None)
            size = int(data.get("file_size") or 0)
            if size > MAX_MEDIA_BYTES:
                raise too_big(size)
            body, _ = await fetch_capped(http, data["url"], headers=self._headers(),
                                         what="the WhatsApp media")
            return body


def _json(response: Any) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def failure(status: int, data: dict[str, Any], retry_after: str | None) -> DeliveryFailed:
    """A Graph API error as a delivery failure: retry throttling and outages, not the rest."""
    raw = data.get("error")
    error: dict[str, Any] = raw if isinstance(raw, dict) else {}
    code = error.get("code")
    extra = error.get("error_data")
    details = extra.get("details") if isinstance(extra, dict) else None
    message = f"WhatsApp error {code}: {error.get('message') or status}"
    if details:
        message += f" ({details})"
    if code == OUTSIDE_WINDOW:
        return DeliveryFailed(f"outside WhatsApp's 24-hour customer-service window: {message}",
                              retryable=False, window_closed=True)
    wait = float(retry_after) if retry_after and retry_after.isdigit() else None
    if status == 429 or status >= 500 or code in RETRYABLE_CODES:
        return DeliveryFailed(message, retry_after=wait)
    return DeliveryFailed(message, retryable=False)


def _sender(settings: Settings) -> WhatsAppSender | None:
    token = settings.secret("whatsapp_token")
    phone = settings.whatsapp_phone_number_id
    if not token or not phone:
        return None
    return WhatsAppSender(token, phone, settings.whatsapp_api_base, settings.whatsapp_template)


def _chat(wa_id: str) -> ChatAddress:
    return ChatAddress(f"whatsapp:{wa_id}", {"chat_id": wa_id, "thread_id": None},
                       f"whatsapp:{wa_id}")


def chat_address(message: InboundMessage) -> ChatAddress:
    return _chat(message.chat_id)


CHAT_HELP = "whatsapp:<international number, digits only>, e.g. whatsapp:4915112345678"


def parse_chat(rest: str) -> ChatAddress:
    number = rest.strip().removeprefix("+")
    if not re.fullmatch(r"\d{6,20}", number):
        raise IrisUsageError(f"not a WhatsApp chat: whatsapp:{rest} (expected {CHAT_HELP})")
    return _chat(number)


SPEC = PlatformSpec(
    name="whatsapp", push=True, interactive=True, webhook="functions.whatsapp", sender=_sender,
    prompt_hint="You are talking on WhatsApp: keep answers short; simple Markdown only.",
    chat_address=chat_address, parse_chat=parse_chat, same_chat=same_chat_id, chat_help=CHAT_HELP,
)
