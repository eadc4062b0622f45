"""Outbound Google Chat through the Chat API (httpx and PyJWT, imported on first send).

Iris answers asynchronously: the webhook acknowledges the event with an empty response at once,
and the answer is created in the space from the worker (``POST {api}/{space}/messages``, in the
event's thread: ``messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD``), with app
authentication: a service account's access token (scope ``chat.bot``) from the OAuth 2.0 JWT
bearer grant, the assertion signed RS256 with the account's private key; cached until shortly
before it expires. Parts are at most 4,096 characters (the Chat API's limit of a message's
text). A ``clarify`` question carries its choices as a card's buttons (``cardsV2``) on its first
part.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

from core.contracts.senders import DeliveryFailed
from core.errors import IrisUsageError
from core.platforms.format_googlechat import render_block
from core.platforms.googlechat_inbound import question_cards
from core.platforms.oauth_token import CachedToken
from core.platforms.offload import formatted
from core.platforms.spec import ChatAddress, PlatformSpec, same_chat_id
from core.platforms.split import Part, split_message

if TYPE_CHECKING:
    from core.config import Settings
    from core.messages import InboundMessage

MESSAGE_LIMIT = 4096
SCOPE = "https://www.googleapis.com/auth/chat.bot"
GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SPACE = re.compile(r"^spaces/[A-Za-z0-9_-]{1,128}$")
THREAD = re.compile(r"^spaces/[A-Za-z0-9_-]{1,128}/threads/[A-Za-z0-9_.-]{1,128}$")


def service_account(raw: str) -> dict[str, str]:
    """The service account key file's fields Iris needs; IrisUsageError when it is not one."""
    try:
        info = json.loads(raw)
    except ValueError:
        raise IrisUsageError("IRIS_GOOGLECHAT_SERVICE_ACCOUNT is not JSON: paste the service "
                             "account's key file") from None
    need = ("client_email", "private_key", "token_uri")
    if not isinstance(info, dict) or not all(isinstance(info.get(k), str) for k in need):
        raise IrisUsageError("IRIS_GOOGLECHAT_SERVICE_ACCOUNT lacks client_email, private_key "
                             "or token_uri: paste the service account's JSON key file")
    return {k: str(v) for k, v in info.items() if isinstance(v, str)}


class GoogleChatSender:
    def __init__(self, account: dict[str, str], api_base: str) -> None:
        self.account, self.api_base = account, api_base.rstrip("/")
        self._token = CachedToken("Google token endpoint")

    def parts(self, text: str) -> list[Part]:
        return split_message(text, MESSAGE_LIMIT, render_block)

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        parts = await formatted(self.parts, text)
        return [await self.send_part(target, part, i) for i, part in enumerate(parts)]

    async def send_part(self, target: dict[str, Any], part: Part, index: int) -> str:
        space = str(target.get("space") or target.get("chat_id") or "")
        if not SPACE.match(space):
            raise DeliveryFailed(f"Google Chat: not a space: {space!r}", retryable=False)
        body: dict[str, Any] = {"text": part.rendered}
        url = f"{self.api_base}/{space}/messages"
        thread = target.get("thread")
        if isinstance(thread, str) and THREAD.match(thread):
            body["thread"] = {"name": thread}
            url += "?messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"
        choices = target.get("choices") if index == 0 else None
        if choices:
            body["cardsV2"] = question_cards(choices)
        status, data = await self._post(url, body)
        if status == 401:  # the cached token was refused: fetch a new one, once
            self._token.drop()
            status, data = await self._post(url, body)
        if status >= 300:
            raise failure(status, data)
        return str(data.get("name", ""))

    async def download(self, resource_name: str) -> bytes:
        """A file the person uploaded: ``GET {api}/media/{resourceName}?alt=media`` with the
        app's token, refused past 20 MB before or while downloading."""

        from core.platforms.media import fetch_capped
        from core.tls import tls_client

        if not re.fullmatch(r"[A-Za-z0-9_.=+-]{1,1024}", resource_name) or ".." in \
                resource_name:
            raise DeliveryFailed("Google Chat: not an attachment's resource name",
                                 retryable=False)
        headers = {"Authorization": f"Bearer {await self.token()}"}
        async with tls_client(timeout=30.0) as http:
            body, _ = await fetch_capped(http, f"{self.api_base}/media/{resource_name}"
                                         "?alt=media", headers=headers,
                                         what="the Google Chat attachment")
        return body

    async def _post(self, url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        import httpx

        from core.tls import tls_client

        headers = {"Authorization": f"Bearer {await self.token()}"}
        try:
            async with tls_client(timeout=15.0) as http:
                response = await http.post(url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"Google Chat unreachable: {type(exc).__name__}: {exc}") from exc
        try:
            data = response.json()
        except ValueError:
            data = {}
        if response.status_code == 429:
            wait = response.headers.get("retry-after", "")
            raise DeliveryFailed(f"Google Chat rate limit: {data}",
                                 retry_after=float(wait) if wait.isdigit() else 2.0)
        return response.status_code, data if isinstance(data, dict) else {}

    async def token(self) -> str:
        """An access token for the service account (JWT bearer grant, RFC 7523), cached."""
        if (token := self._token.fresh()) is not None:
            return token
        import jwt

        now = int(time.time())
        token_uri = self.account["token_uri"]
        claims = {"iss": self.account["client_email"], "scope": SCOPE, "aud": token_uri,
                  "iat": now, "exp": now + 3600}
        headers = {"kid": self.account["private_key_id"]} if self.account.get(
            "private_key_id") else None
        try:
            assertion = jwt.encode(claims, self.account["private_key"], algorithm="RS256",
                                   headers=headers)
        except (ValueError, TypeError, jwt.PyJWTError) as exc:
            raise DeliveryFailed(f"Google Chat: the service account's private key is not "
                                 f"usable: {type(exc).__name__}", retryable=False) from None
        return await self._token.fetch(token_uri, {"grant_type": GRANT,
                                                   "assertion": assertion})

def failure(status: int, data: dict[str, Any]) -> DeliveryFailed:
    error = data.get("error") if isinstance(data.get("error"), dict) else {}
    detail = f"{error.get('status', '')}: {error.get('message', '')}" if error else data
    return DeliveryFailed(f"Google Chat answered {status}: {detail}",
                          retryable=status >= 500 or status == 401)


def _sender(settings: Settings) -> GoogleChatSender | None:
    raw = settings.secret("googlechat_service_account")
    if not settings.googlechat_audience or not raw:
        return None
    return GoogleChatSender(service_account(raw), settings.googlechat_api_base)


def _chat(space: str) -> ChatAddress:
    return ChatAddress(f"googlechat:{space}", {"chat_id": space, "thread_id": None,
                                               "space": space}, f"googlechat:{space}")


def chat_address(message: InboundMessage) -> ChatAddress:
    return _chat(message.chat_id)


CHAT_HELP = "googlechat:spaces/<space id>, e.g. googlechat:spaces/AAAAx1b2c3d"


def parse_chat(rest: str) -> ChatAddress:
    if not SPACE.match(rest.strip()):
        raise IrisUsageError(f"not a Google Chat space: googlechat:{rest} (expected "
                             f"{CHAT_HELP})")
    return _chat(rest.strip())


SPEC = PlatformSpec(
    name="googlechat", push=True, interactive=True, webhook="functions.googlechat",
    sender=_sender,
    prompt_hint="You are talking on Google Chat: keep answers short; *bold*, _italic_.",
    chat_address=chat_address, parse_chat=parse_chat, same_chat=same_chat_id, chat_help=CHAT_HELP,
)
