"""Outbound Microsoft Teams through the Bot Connector REST API (httpx, imported on first send).

A reply is posted into the conversation the message came from, at the ``serviceUrl`` that came
with it (checked against the Bot Connector's token at the webhook): ``POST {serviceUrl}/v3/
conversations/{conversationId}/activities/{replyToId}`` (or ``…/activities`` without a message
to answer: scheduled results, at the configured service URL). Each call carries a bearer token
from the Microsoft identity platform's client-credentials grant (``scope =
https://api.botframework.com/.default``), cached until shortly before it expires and fetched
again when the connector refuses it. Parts are at most 7,000 characters (Teams takes ~28 KB per
message, four UTF-8 bytes a character at worst). A ``clarify`` question carries its choices as an
Adaptive Card (``core.platforms.teams_buttons``) on its first part. Tokens are only ever sent
to an https service URL (or loopback, for ``iris dev`` and tests).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from core.contracts.senders import DeliveryFailed
from core.errors import IrisUsageError
from core.platforms.format_teams import render_block
from core.platforms.oauth_token import CachedToken
from core.platforms.offload import formatted
from core.platforms.spec import ChatAddress, PlatformSpec, same_chat_id
from core.platforms.split import Part, split_message
from core.platforms.teams_buttons import question_card

if TYPE_CHECKING:
    from core.config import Settings
    from core.messages import InboundMessage

MESSAGE_LIMIT = 7000
SCOPE = "https://api.botframework.com/.default"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def safe_service_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK):
        return url.rstrip("/")
    raise DeliveryFailed(f"Teams: refusing to send a token to {url!r} (not https)",
                         retryable=False)


class TeamsSender:
    def __init__(self, app_id: str, app_password: str, token_url: str,
                 service_url: str) -> None:
        self.app_id, self.app_password = app_id, app_password
        self.token_url, self.service_url = token_url, service_url
        self._token = CachedToken("Teams token endpoint")

    def parts(self, text: str) -> list[Part]:
        return split_message(text, MESSAGE_LIMIT, render_block)

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        parts = await formatted(self.parts, text)
        return [await self.send_part(target, part, i) for i, part in enumerate(parts)]

    async def send_part(self, target: dict[str, Any], part: Part, index: int) -> str:
        conversation = target.get("conversation_id") or target.get("chat_id")
        if not conversation:
            raise DeliveryFailed("Teams: no conversation to send to", retryable=False)
        base = safe_service_url(str(target.get("service_url") or self.service_url))
        url = f"{base}/v3/conversations/{quote(str(conversation), safe='')}/activities"
        body: dict[str, Any] = {"type": "message", "text": part.rendered,
                                "textFormat": "markdown"}
        reply_to = target.get("reply_to_id")
        if reply_to:
            url += f"/{quote(str(reply_to), safe='')}"
            body["replyToId"] = reply_to
        choices = target.get("choices") if index == 0 else None
        if choices:
            body["attachments"] = [question_card(choices)]
        status, data = await self._post(url, body)
        if status == 401:  # the cached token was refused: fetch a new one, once
            self._token.drop()
            status, data = await self._post(url, body)
        if status >= 300:
            raise failure(status, data)
        return str(data.get("id", ""))

    async def download(self, ref: str) -> bytes:
        """A file the person sent: ``file:<url>`` is a pre-authenticated download URL (no
        token sent), ``connector:<url>`` a picture at the connector (the bot's token sent);
        https only (or loopback), refused past 20 MB before or while downloading."""

        from core.platforms.media import fetch_capped
        from core.tls import tls_client

        how, _, url = ref.partition(":")
        if how not in ("file", "connector"):
            raise DeliveryFailed(f"Teams: not a file reference: {ref[:40]!r}", retryable=False)
        url = safe_service_url(url)
        headers = {"Authorization": f"Bearer {await self.token()}"} if how == "connector" \
            else None
        async with tls_client(timeout=30.0) as http:
            body, _ = await fetch_capped(http, url, headers=headers, what="the Teams file")
        return body

    async def _post(self, url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        import httpx

        from core.tls import tls_client

        headers = {"Authorization": f"Bearer {await self.token()}"}
        try:
            async with tls_client(timeout=15.0) as http:
                response = await http.post(url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"Teams unreachable: {type(exc).__name__}: {exc}") from exc
        if response.status_code == 429:
            wait = response.headers.get("retry-after", "")
            raise DeliveryFailed("Teams rate limit",
                                 retry_after=float(wait) if wait.isdigit() else 1.0)
        try:
            data = response.json()
        except ValueError:
            data = {}
        return response.status_code, data if isinstance(data, dict) else {}

    async def token(self) -> str:
        """A Bot Connector access token (client-credentials grant), cached."""
        if (token := self._token.fresh()) is not None:
            return token
        form = {"grant_type": "client_credentials", "client_id": self.app_id,
                "client_secret": self.app_password, "scope": SCOPE}
        return await self._token.fetch(self.token_url, form)

def failure(status: int, data: dict[str, Any]) -> DeliveryFailed:
    error = data.get("error") if isinstance(data.get("error"), dict) else {}
    detail = f"{error.get('code', '')}: {error.get('message', '')}" if error else data
    return DeliveryFailed(f"Teams answered {status}: {detail}",
                          retryable=status >= 500 or status == 401)


def _sender(settings: Settings) -> TeamsSender | None:
    password = settings.secret("teams_app_password")
    if not settings.teams_app_id or not password:
        return None
    return TeamsSender(settings.teams_app_id, password, settings.teams_token_url,
                       settings.teams_service_url)


def _chat(conversation: str, service_url: str | None) -> ChatAddress:
    address: dict[str, Any] = {"chat_id": conversation, "thread_id": None,
                               "conversation_id": conversation}
    if service_url:
        address["service_url"] = service_url
    return ChatAddress(f"teams:{conversation}", address, f"teams:{conversation}")


def chat_address(message: InboundMessage) -> ChatAddress:
    return _chat(message.chat_id, message.meta.get("service_url"))


CHAT_HELP = "teams:<conversation id>, e.g. teams:a:1pLq3x or teams:19:abc@thread.tacv2"


def parse_chat(rest: str) -> ChatAddress:
    if not re.fullmatch(r"[A-Za-z0-9:@._;=\-]{3,1024}", rest.strip()):
        raise IrisUsageError(f"not a Teams conversation: teams:{rest} (expected {CHAT_HELP})")
    return _chat(rest.strip(), None)


SPEC = PlatformSpec(
    name="teams", push=True, interactive=True, webhook="functions.teams", sender=_sender,
    prompt_hint="You are talking on Microsoft Teams: keep answers short; Markdown.",
    chat_address=chat_address, parse_chat=parse_chat, same_chat=same_chat_id, chat_help=CHAT_HELP,
)
