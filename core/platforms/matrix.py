"""Outbound Matrix, as an application service: replies through the client-server API
(``PUT {homeserver}/_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}``) with the
``as_token``, over httpx (imported on first send); room invitations to Iris' user are accepted
with ``POST /_matrix/client/v3/join/{roomId}``; a room's members are counted with ``GET
/_matrix/client/v3/rooms/{roomId}/joined_members``. Files people send are downloaded through
the authenticated media endpoint (``GET /_matrix/client/v1/media/download/{serverName}/
{mediaId}``, spec v1.11) of the configured homeserver only, for media of its own server name
only, never following a redirect, within the intake's cap while streaming.

Each part's transaction id is derived from the delivery and the part's position, so a retried
send is deduplicated by the homeserver (the spec makes ``PUT …/send/…/{txnId}`` idempotent per
access token) and never shown twice. Replies are ``m.text`` messages in plain text (the body
every client shows), split at ``MESSAGE_LIMIT`` characters on paragraph boundaries (an event
may not exceed 65,536 bytes). Matrix has no standard buttons: a ``clarify`` question numbers
its choices and the person answers with the number.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from core.contracts.senders import DeliveryFailed
from core.errors import IrisUsageError
from core.platforms.format_plain import render_block
from core.platforms.matrix_inbound import parse_mxc
from core.platforms.offload import formatted
from core.platforms.spec import ChatAddress, PlatformSpec, same_chat_id
from core.platforms.split import split_message

if TYPE_CHECKING:
    from core.config import Settings
    from core.messages import InboundMessage
    from core.store.deliveries import Delivery

MESSAGE_LIMIT = 16_000
ROOM = re.compile(r"^![A-Za-z0-9._=/+-]+:[A-Za-z0-9.:-]+$")


class MatrixSender:
    def __init__(self, homeserver: str, as_token: str, user_id: str | None = None) -> None:
        self.homeserver = homeserver.rstrip("/")
        self.as_token = as_token
        self.user_id = user_id

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.as_token}"}

    async def send(self, target: dict[str, Any], text: str) -> list[str]:
        """An answer outside the delivery table (a stranger's pairing code)."""
        digest = hashlib.sha256(f"{target.get('chat_id')}\n{text}".encode()).hexdigest()
        return await self._deliver(target, text, key=f"direct:{digest}")

    async def send_record(self, delivery: Delivery) -> list[str]:
        return await self._deliver(
            delivery.target, delivery.text, key=f"{delivery.user_id}:{delivery.id}"
        )

    async def _deliver(self, target: dict[str, Any], text: str, *, key: str) -> list[str]:
        parts = await formatted(lambda t: split_message(t, MESSAGE_LIMIT, render_block), text)
        room = str(target["chat_id"])
        ids = []
        for index, part in enumerate(parts):
            txn = hashlib.sha256(f"iris:{key}:{index}".encode()).hexdigest()[:32]
            body = {"msgtype": "m.text", "body": part.rendered}
            path = f"/_matrix/client/v3/rooms/{quote(room, safe='')}/send/m.room.message/{txn}"
            data = await self._request("PUT", path, body)
            ids.append(str(data.get("event_id") or txn))
        return ids

    async def join(self, room_id: str) -> None:
        await self._request("POST", f"/_matrix/client/v3/join/{quote(room_id, safe='')}", {})

    async def room_encrypted(self, room_id: str) -> bool:
        """Whether the room has end-to-end encryption on: its ``m.room.encryption`` state
        event exists (``GET …/rooms/{roomId}/state/m.room.encryption``; ``404 M_NOT_FOUND``:
        never turned on; it cannot be turned off)."""
        path = f"/_matrix/client/v3/rooms/{quote(room_id, safe='')}/state/m.room.encryption"
        status, data = await self._call("GET", path, None)
        if status == 200:
            return True
        if status == 404 and data.get("errcode") == "M_NOT_FOUND":
            return False
        raise _failure(status, data)

    async def joined_members(self, room_id: str) -> list[str]:
        """The user ids of the room's joined members."""
        path = f"/_matrix/client/v3/rooms/{quote(room_id, safe='')}/joined_members"
        joined = (await self._request("GET", path, None)).get("joined")
        return [str(user) for user in joined] if isinstance(joined, dict) else []

    async def download(self, ref: str) -> bytes:
        """The content of an ``mxc://`` URI a person sent, always through Iris' own homeserver
        (authenticated media, spec v1.11): for a file kept on another server the homeserver
        fetches it over federation and caches it, so Iris never contacts that server itself.
        A server that cannot be reached is the homeserver's ``502``, a clear refusal here."""

        from core.intake.documents import DocumentRefused
        from core.platforms.media import fetch_capped
        from core.tls import tls_client

        parsed = parse_mxc(ref)
        if parsed is None:
            raise DocumentRefused("it has no valid mxc:// address")
        server, media = parsed
        url = (f"{self.homeserver}/_matrix/client/v1/media/download/"
               f"{quote(server, safe=':')}/{media}")
        if self.user_id:
            url += f"?user_id={quote(self.user_id, safe='')}"
        async with tls_client(timeout=30.0, follow_redirects=False) as http:
            body, _ = await fetch_capped(http, url, headers=self._headers(), what="the file")
            return body

    async def _request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        status, data = await self._call(method, path, body)
        if status == 200:
            return data
        raise _failure(status, data)

    async def _call(
        self, method: str, path: str, body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        """The status and JSON object of one client-server API call (an answer that is not an
        object reads as ``{}``); an unreachable homeserver raises ``DeliveryFailed``."""
        import httpx

        from core.tls import tls_client

        params = {"user_id": self.user_id} if self.user_id else None
        try:
            async with tls_client(timeout=15.0) as http:
                response = await http.request(
                    method,
                    self.homeserver + path,
                    json=body,
                    headers=self._headers(),
                    params=params,
                )
        except httpx.HTTPError as exc:
            raise DeliveryFailed(
                f"Matrix homeserver unreachable: {type(exc).__name__}: {exc}"
            ) from exc
        try:
            data = response.json()
        except ValueError:
            data = {}
        return response.status_code, data if isinstance(data, dict) else {}


def _failure(status: int, data: dict[str, Any]) -> DeliveryFailed:
    message = f"Matrix error {data.get('errcode')}: {data.get('error') or status}"
    if status == 429 or status >= 500:
        wait = data.get("retry_after_ms")
        return DeliveryFailed(message, retry_after=wait / 1000 if isinstance(wait, int) else None)
    return DeliveryFailed(message, retryable=False)


def _sender(settings: Settings) -> MatrixSender | None:
    token = settings.secret("matrix_as_token")
    if not token or not settings.matrix_homeserver_url:
        return None
    return MatrixSender(settings.matrix_homeserver_url, token, settings.matrix_user_id)


def _chat(room: str) -> ChatAddress:
    return ChatAddress(f"matrix:{room}", {"chat_id": room, "thread_id": None}, f"matrix:{room}")


def chat_address(message: InboundMessage) -> ChatAddress:
    return _chat(message.chat_id)


CHAT_HELP = "matrix:<room id>, e.g. matrix:!abcdefgh:example.org"


def parse_chat(rest: str) -> ChatAddress:
    room = rest.strip()
    if not ROOM.match(room):
        raise IrisUsageError(f"not a Matrix room: matrix:{rest} (expected {CHAT_HELP})")
    return _chat(room)


SPEC = PlatformSpec(
    name="matrix",
    push=True,
    interactive=True,
    webhook="functions.matrix",
    sender=_sender,
    prompt_hint="You are talking on Matrix: plain text; keep answers short.",
    chat_address=chat_address,
    parse_chat=parse_chat,
    same_chat=same_chat_id,
    chat_help=CHAT_HELP,
)
