"""Outbound Discord over its REST API (httpx, imported on first send).

An answer to an interaction edits the deferred response (``PATCH /webhooks/{application_id}/
{token}/messages/@original``) with its first part and sends the rest as follow-ups
(``POST /webhooks/{application_id}/{token}?wait=true``); parts are at most 2,000 characters.
The answer to a button press (``followup`` in the target) is all follow-ups: that interaction's
original response is the question it pressed. A ``clarify`` question carries its choices as
buttons (``core.platforms.discord_buttons``) on its first part.
The interaction token lives 15 minutes: past that, or for scheduled results, the bot posts to
the channel (``POST /channels/{channel_id}/messages`` with ``Authorization: Bot …``). Replies
never ping anyone (``allowed_mentions`` parses nothing). Every call carries the
``User-Agent: DiscordBot ($url, $versionNumber)`` Discord's API reference asks of bots.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from core.contracts.senders import DeliveryFailed
from core.errors import IrisUsageError
from core.platforms.discord_buttons import question_components
from core.platforms.format_discord import render_block
from core.platforms.offload import formatted
from core.platforms.spec import ChatAddress, PlatformSpec, same_chat_id
from core.platforms.split import Part, split_message

if TYPE_CHECKING:
    from core.config import Settings
    from core.messages import InboundMessage

MESSAGE_LIMIT = 2000
DEFAULT_API_BASE = "https://discord.com/api/v10"
NO_MENTIONS: dict[str, list[str]] = {"parse": []}
EXPIRED_TOKEN_CODES = frozenset({10015, 50027})  # Unknown Webhook, Invalid Webhook Token
PROJECT_URL = "https://pypi.org/project/iris-agent/"


def user_agent() -> str:
    """``DiscordBot ($url, $versionNumber)`` (Discord API reference, "User Agent")."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("iris-agent")
    except PackageNotFoundError:
        number = "0"
    return f"DiscordBot ({PROJECT_URL}, {number})"


class DiscordSender:
    def __init__(self, bot_token: str | None, application_id: str | None,
                 api_base: str | None = None) -> None:
        self.bot_token = bot_token
        self.application_id = application_id
        self.api_base = (api_base or DEFAULT_API_BASE).rstrip("/")

    def parts(self, text: str) -> list[Part]:
        return split_message(text, MESSAGE_LIMIT, render_block)

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        parts = await formatted(self.parts, text)
        return [await self.send_part(target, part, i) for i, part in enumerate(parts)]

    async def send_part(self, target: dict[str, Any], part: Part, index: int) -> str:
        body: dict[str, Any] = {"content": part.rendered, "allowed_mentions": NO_MENTIONS}
        choices = target.get("choices") if index == 0 else None
        if choices:
            body["components"] = question_components(choices)
        token = target.get("interaction_token")
        app = target.get("application_id") or self.application_id
        if token and app:
            hook = f"{self.api_base}/webhooks/{app}/{token}"
            if index == 0 and not target.get("followup"):
                status, data = await self._call("PATCH", f"{hook}/messages/@original", body)
            else:
                status, data = await self._call("POST", f"{hook}?wait=true", body)
            if status < 300:
                return str(data.get("id", ""))
            if not (self._expired(status, data) and self.bot_token):
                raise failure(status, data)
        return await self.post_to_channel(target, body)

    async def post_to_channel(self, target: dict[str, Any], body: dict[str, Any]) -> str:
        channel = target.get("channel_id") or target.get("chat_id")
        if not self.bot_token:
            raise DeliveryFailed("Discord: no interaction to answer and IRIS_DISCORD_BOT_TOKEN "
                                 "is not set", retryable=False)
        status, data = await self._call("POST", f"{self.api_base}/channels/{channel}/messages",
                                        body, bot=True)
        if status >= 300:
            raise failure(status, data)
        return str(data.get("id", ""))

    async def remove_buttons(self, target: dict[str, Any], message_id: str, text: str,
                             outcome: str) -> None:
        """Take the buttons off a question that closed without a press: the bot edits the
        message (``PATCH /channels/{channel}/messages/{id}``, ``components: []``)."""
        channel = target.get("channel_id") or target.get("chat_id")
        if not self.bot_token:
            raise DeliveryFailed("Discord: IRIS_DISCORD_BOT_TOKEN is not set; the buttons stay",
                                 retryable=False)
        status, data = await self._call(
            "PATCH", f"{self.api_base}/channels/{channel}/messages/{message_id}",
            {"components": []}, bot=True)
        if status >= 300:
            raise failure(status, data)

    @staticmethod
    def _expired(status: int, data: dict[str, Any]) -> bool:
        return status in (401, 404) and data.get("code") in EXPIRED_TOKEN_CODES

    async def _call(self, method: str, url: str, body: Any | None = None,
                    *, bot: bool = False) -> tuple[int, dict[str, Any]]:
        import httpx

        from core.tls import tls_client

        headers = {"User-Agent": user_agent()}
        if bot:
            headers["Authorization"] = f"Bot {self.bot_token}"
        try:
            async with tls_client(timeout=15.0) as http:
                response = await http.request(method, url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"Discord unreachable: {type(exc).__name__}: {exc}") from exc
        try:
            data = response.json()
        except ValueError:
            data = {}
        if response.status_code == 429:
            wait = data.get("retry_after") if isinstance(data, dict) else None
            raise DeliveryFailed(f"Discord rate limit: {data}",
                                 retry_after=float(wait) if wait is not None else 1.0)
        return response.status_code, data if isinstance(data, dict) else {"items": data}

    async def register_commands(self, commands: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Overwrite the application's global commands (``iris discord register-commands``)."""
        status, data = await self._call(
            "PUT", f"{self.api_base}/applications/{self.application_id}/commands", commands,
            bot=True)
        if status >= 300:
            raise failure(status, data)
        return list(data.get("items", []))


def failure(status: int, data: dict[str, Any]) -> DeliveryFailed:
    message = f"Discord answered {status}: {data.get('message') or data}"
    if data.get("code"):
        message += f" (code {data['code']})"
    return DeliveryFailed(message, retryable=status >= 500)


def _sender(settings: Settings) -> DiscordSender | None:
    if not settings.discord_public_key:
        return None
    return DiscordSender(settings.secret("discord_bot_token"), settings.discord_application_id,
                         settings.discord_api_base)


def _chat(channel: str) -> ChatAddress:
    return ChatAddress(f"discord:{channel}", {"chat_id": channel, "thread_id": None,
                                              "channel_id": channel}, f"discord:{channel}")


def chat_address(message: InboundMessage) -> ChatAddress:
    return _chat(message.chat_id)


CHAT_HELP = "discord:<channel id>, e.g. discord:1234567890123456789"


def parse_chat(rest: str) -> ChatAddress:
    if not re.fullmatch(r"\d{1,32}", rest.strip()):
        raise IrisUsageError(f"not a Discord channel: discord:{rest} (expected {CHAT_HELP})")
    return _chat(rest.strip())


SPEC = PlatformSpec(
    name="discord", push=True, interactive=True, webhook="functions.discord", sender=_sender,
    prompt_hint="You are talking on Discord: keep answers short; Discord Markdown.",
    chat_address=chat_address, parse_chat=parse_chat, same_chat=same_chat_id, chat_help=CHAT_HELP,
)
