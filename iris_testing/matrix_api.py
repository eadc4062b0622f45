"""A fake Matrix homeserver's client-server API for tests that drive Iris' real Matrix sender
over HTTP (reference: the Matrix specification v1.x, client-server API "PUT /_matrix/client/v3/
rooms/{roomId}/send/{eventType}/{txnId}", "POST /_matrix/client/v3/join/{roomIdOrAlias}",
standard error responses; application service API "Pushing events", "Identity assertion"):

- ``PUT …/send/m.room.message/{txnId}`` → ``{"event_id": "$…"}``; the same access token and
  transaction id again return the first event id and send nothing (the spec's idempotency);
  the body must be an object with ``msgtype`` and ``body``; events over 65,536 bytes are
  ``413 M_TOO_LARGE``.
- ``POST …/join/{roomId}`` → ``{"room_id"}`` (Iris' user becomes a member).
- ``GET …/rooms/{roomId}/state/{eventType}[/{stateKey}]`` → the state event's content (set by
  the test with ``set_state``; ``encrypt`` turns on ``m.room.encryption``), ``404 M_NOT_FOUND``
  when the room has no such state, ``403 M_FORBIDDEN`` when Iris' user is not in the room.
- ``GET …/rooms/{roomId}/joined_members`` → ``{"joined": {user id: {"display_name",
  "avatar_url"}}}``; ``403 M_FORBIDDEN`` when Iris' user is not in the room. Members are set by
  the test (``set_members``).
- ``GET /_matrix/client/v1/media/download/{serverName}/{mediaId}[/{fileName}]`` (authenticated
  media, spec v1.11) → the bytes registered with ``add_media``, with their ``Content-Type``
  and ``Content-Disposition``, and ``Content-Length`` unless registered ``chunked``; no token
  is ``401 M_MISSING_TOKEN``, unknown media ``404 M_NOT_FOUND``. Every download is recorded
  (``media_requests``). Media of another server name is served as the homeserver's cached
  copy after it fetched the file over federation (Synapse's media repository); a server set
  ``unreachable`` is Synapse's ``502 M_UNKNOWN "Failed to fetch remote media"``.
- a wrong token is ``401 M_UNKNOWN_TOKEN``; ``user_id`` (masquerading) must be in the
  registration's namespace, here exactly Iris' user, else ``403 M_FORBIDDEN``; injected
  failures are ``429 M_LIMIT_EXCEEDED`` with ``retry_after_ms`` or ``500 M_UNKNOWN``.

It also builds transactions as a homeserver pushes them (``message_event``, ``invite_event``,
``transaction``).
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

BOT = "@iris:example.org"
PERSON = "@ada:example.org"
ROOM = "!dmroom:example.org"
EVENT_LIMIT = 65_536
MEGOLM = "m.megolm.v1.aes-sha2"


def mx_error(status: int, errcode: str, error: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"errcode": errcode, "error": error, **extra}, status_code=status)


class FakeHomeserver:
    def __init__(self, *, as_token: str, bot: str = BOT) -> None:
        self.as_token = as_token
        self.bot = bot
        self._lock = threading.Lock()
        self._sent: list[dict[str, Any]] = []
        self._txns: dict[tuple[str, str], str] = {}
        self._failures: list[int] = []
        self._ids = itertools.count(1)
        self.joined: list[str] = []
        self.rooms: dict[str, dict[str, str]] = {}  # room → member user id → display name
        self.media: dict[tuple[str, str], tuple[bytes, str, bool]] = {}
        self.media_requests: list[str] = []
        self.unreachable: set[str] = set()  # servers whose media federation cannot fetch
        self.state: dict[tuple[str, str, str], dict[str, Any]] = {}  # (room, type, key) → content
        self.app = Starlette(
            routes=[
                Route(
                    "/_matrix/client/v3/rooms/{room}/joined_members",
                    self._joined_members,
                    methods=["GET"],
                ),
                Route(
                    "/_matrix/client/v1/media/download/{server}/{media}",
                    self._download,
                    methods=["GET"],
                ),
                Route(
                    "/_matrix/client/v1/media/download/{server}/{media}/{name}",
                    self._download,
                    methods=["GET"],
                ),
                Route(
                    "/_matrix/client/v3/rooms/{room}/send/{kind}/{txn}", self._send, methods=["PUT"]
                ),
                Route("/_matrix/client/v3/join/{room}", self._join, methods=["POST"]),
                Route("/_matrix/client/v3/rooms/{room}/state/{kind}", self._state,
                      methods=["GET"]),
                Route("/_matrix/client/v3/rooms/{room}/state/{kind}/{key}", self._state,
                      methods=["GET"]),
            ]
        )

    def fail_next(self, times: int = 1, status: int = 429) -> None:
        with self._lock:
            self._failures.extend([status] * times)

    def sent(self, room: str | None = None) -> list[str]:
        with self._lock:
            return [m["content"]["body"] for m in self._sent if room in (None, m["room"])]

    def set_state(self, room: str, kind: str, content: dict[str, Any], key: str = "") -> None:
        with self._lock:
            self.state[(room, kind, key)] = content

    def encrypt(self, room: str) -> None:
        """Turn on end-to-end encryption in ``room`` (Megolm, as Element does)."""
        self.set_state(room, "m.room.encryption", {"algorithm": MEGOLM})

    def encrypted_event(self, *, room: str = ROOM, sender: str = PERSON) -> dict[str, Any]:
        """An ``m.room.encrypted`` event as a homeserver pushes it: Megolm ciphertext that only
        a device holding the session key can read."""
        return {
            "type": "m.room.encrypted",
            "room_id": room,
            "sender": sender,
            "event_id": f"${uuid.uuid4().hex}",
            "origin_server_ts": 1,
            "content": {"algorithm": MEGOLM, "ciphertext": "AwgAEnAC" + uuid.uuid4().hex,
                        "device_id": "ADADEVICE", "sender_key": "c2VuZGVyX2tleQ",
                        "session_id": "c2Vzc2lvbl9pZA"},
        }

    def encryption_event(self, *, room: str = ROOM, sender: str = PERSON) -> dict[str, Any]:
        """Someone turned encryption on in ``room`` (the ``m.room.encryption`` state event)."""
        self.encrypt(room)
        return {
            "type": "m.room.encryption",
            "room_id": room,
            "sender": sender,
            "state_key": "",
            "event_id": f"${uuid.uuid4().hex}",
            "origin_server_ts": 1,
            "content": {"algorithm": MEGOLM},
        }

    def set_members(self, room: str, *users: str) -> None:
        with self._lock:
            self.rooms[room] = {user: user[1:].split(":", 1)[0].title() for user in users}

    def add_media(
        self,
        data: bytes,
        content_type: str,
        *,
        server: str = "example.org",
        chunked: bool = False,
    ) -> str:
        """Registers uploaded content; returns its ``mxc://`` URI."""
        media = uuid.uuid4().hex
        with self._lock:
            self.media[(server, media)] = (data, content_type, chunked)
        return f"mxc://{server}/{media}"

    def media_event(
        self,
        msgtype: str,
        url: str | None,
        body: str,
        *,
        filename: str | None = None,
        mimetype: str | None = None,
        size: int | None = None,
        room: str = ROOM,
        sender: str = PERSON,
        encrypted: bool = False,
    ) -> dict[str, Any]:
        """An ``m.image``/``m.file``/… event as a client sends it (``url``, or ``file`` when
        ``encrypted``: an EncryptedFile whose key Iris never has)."""
        info: dict[str, Any] = {}
        if mimetype is not None:
            info["mimetype"] = mimetype
        if size is not None:
            info["size"] = size
        content: dict[str, Any] = {"msgtype": msgtype, "body": body, "info": info}
        if filename is not None:
            content["filename"] = filename
        if encrypted:
            content["file"] = {
                "url": url,
                "key": {"kty": "oct", "alg": "A256CTR", "k": "c2VjcmV0", "ext": True},
                "iv": "AAAAAAAAAAAAAAAAAAAAAA",
                "hashes": {"sha256": "deadbeef"},
                "v": "v2",
            }
        else:
            content["url"] = url
        event = self.message_event(body, room=room, sender=sender)
        event["content"] = content
        return event

    def message_event(
        self,
        body: str,
        *,
        sender: str = PERSON,
        room: str = ROOM,
        event_id: str | None = None,
        msgtype: str = "m.text",
        mentions: list[str] | None = None,
    ) -> dict[str, Any]:
        content: dict[str, Any] = {"msgtype": msgtype, "body": body}
        if mentions is not None:
            content["m.mentions"] = {"user_ids": mentions}
        return {
            "type": "m.room.message",
            "room_id": room,
            "sender": sender,
            "event_id": event_id or f"${uuid.uuid4().hex}",
            "origin_server_ts": 1,
            "content": content,
        }

    def member_event(self, room: str, user: str, membership: str = "join") -> dict[str, Any]:
        return {
            "type": "m.room.member",
            "room_id": room,
            "sender": user,
            "state_key": user,
            "event_id": f"${uuid.uuid4().hex}",
            "content": {"membership": membership},
        }

    def invite_event(self, room: str, *, sender: str = PERSON) -> dict[str, Any]:
        return {
            "type": "m.room.member",
            "room_id": room,
            "sender": sender,
            "state_key": self.bot,
            "event_id": f"${uuid.uuid4().hex}",
            "content": {"membership": "invite", "is_direct": True},
        }

    @staticmethod
    def transaction(*events: dict[str, Any]) -> bytes:
        return json.dumps({"events": list(events)}).encode()

    def _check(self, request: Request) -> JSONResponse | None:
        header = request.headers.get("authorization")
        if header is None and "access_token" not in request.query_params:
            return mx_error(401, "M_MISSING_TOKEN", "Missing access token.")
        if header != f"Bearer {self.as_token}":
            return mx_error(401, "M_UNKNOWN_TOKEN", "Unrecognised access token.")
        user = request.query_params.get("user_id")
        if user is not None and user != self.bot:
            return mx_error(
                403, "M_FORBIDDEN", "Application service cannot masquerade as this user."
            )
        with self._lock:
            if self._failures:
                status = self._failures.pop(0)
                if status == 429:
                    return mx_error(429, "M_LIMIT_EXCEEDED", "Too many requests", retry_after_ms=10)
                return mx_error(status, "M_UNKNOWN", "Internal server error")
        return None

    async def _send(self, request: Request) -> Response:
        refused = self._check(request)
        if refused is not None:
            return refused
        raw = await request.body()
        if len(raw) > EVENT_LIMIT:
            return mx_error(413, "M_TOO_LARGE", "event too large")
        try:
            content = json.loads(raw)
        except ValueError:
            return mx_error(400, "M_NOT_JSON", "Content not JSON.")
        if (
            not isinstance(content, dict)
            or not isinstance(content.get("body"), str)
            or not isinstance(content.get("msgtype"), str)
        ):
            return mx_error(400, "M_BAD_JSON", "m.room.message needs msgtype and body")
        room = unquote(request.path_params["room"])
        key = (self.as_token, request.path_params["txn"])
        with self._lock:
            if key in self._txns:
                return JSONResponse({"event_id": self._txns[key]})
            event_id = f"$sent{next(self._ids)}"
            self._txns[key] = event_id
            self._sent.append({"room": room, "content": content, "event_id": event_id})
        return JSONResponse({"event_id": event_id})

    async def _join(self, request: Request) -> Response:
        refused = self._check(request)
        if refused is not None:
            return refused
        room = unquote(request.path_params["room"])
        with self._lock:
            self.joined.append(room)
            self.rooms.setdefault(room, {})[self.bot] = "Iris"
        return JSONResponse({"room_id": room})

    async def _joined_members(self, request: Request) -> Response:
        refused = self._check(request)
        if refused is not None:
            return refused
        room = unquote(request.path_params["room"])
        with self._lock:
            members = dict(self.rooms.get(room, {}))
        if self.bot not in members:
            return mx_error(403, "M_FORBIDDEN", "You aren't a member of the room.")
        joined = {u: {"display_name": name, "avatar_url": None} for u, name in members.items()}
        return JSONResponse({"joined": joined})

    async def _state(self, request: Request) -> Response:
        refused = self._check(request)
        if refused is not None:
            return refused
        room = unquote(request.path_params["room"])
        key = (room, unquote(request.path_params["kind"]),
               unquote(request.path_params.get("key", "")))
        with self._lock:
            member = self.bot in self.rooms.get(room, {})
            content = self.state.get(key)
        if not member:
            return mx_error(403, "M_FORBIDDEN", f"User {self.bot} not in room {room}")
        if content is None:
            return mx_error(404, "M_NOT_FOUND", "Event not found.")
        return JSONResponse(content)

    async def _download(self, request: Request) -> Response:
        key = (request.path_params["server"], request.path_params["media"])
        with self._lock:
            self.media_requests.append(f"{key[0]}/{key[1]}")
        refused = self._check(request)
        if refused is not None:
            return refused
        with self._lock:
            found = self.media.get(key)
            unreachable = key[0] in self.unreachable
        if unreachable:
            return mx_error(502, "M_UNKNOWN", "Failed to fetch remote media")
        if found is None:
            return mx_error(404, "M_NOT_FOUND", "Not found")
        data, content_type, chunked = found
        headers = {"Content-Disposition": "attachment"}
        if chunked:

            async def pieces() -> Any:
                for start in range(0, len(data), 64 * 1024):
                    yield data[start : start + 64 * 1024]

            return StreamingResponse(pieces(), media_type=content_type, headers=headers)
        return Response(data, media_type=content_type, headers=headers)


def matrix_env(url: str, as_token: str, hs_token: str) -> dict[str, str]:
    return {
        "IRIS_MATRIX_HOMESERVER_URL": url,
        "IRIS_MATRIX_AS_TOKEN": as_token,
        "IRIS_MATRIX_HS_TOKEN": hs_token,
        "IRIS_MATRIX_USER_ID": BOT,
        "IRIS_MATRIX_ACCESS": "open",
    }
