"""A fake Discord: builds and signs interactions as Discord sends them (Ed25519 over timestamp +
body) and answers Iris' REST calls in Discord's shapes: ``PATCH /webhooks/{app}/{token}/
messages/@original`` and ``POST /webhooks/{app}/{token}?wait=true`` (the interaction's
response and follow-ups), ``POST /channels/{id}/messages``, ``PATCH /channels/{id}/messages/
{message}`` (an edit of the bot's own message) and ``PUT /applications/{app}/commands`` (bot
token), message objects back, errors as ``{"message", "code"}`` (10015 Unknown Webhook, 10008
Unknown Message, 50005 another user's message, 50035 Invalid Form Body, 429 with
``retry_after``). ``edits`` records each channel message edit; ``fail_edits(n)`` makes the next
``n`` answer 500.

::

    discord = FakeDiscord()
    with serve(discord.app) as server:  # IRIS_DISCORD_API_BASE = f"{server.url}/api/v10"
        ...
    discord.messages(channel_id)         # what Iris wrote there, in order

Messages carry ``components`` (action rows of buttons, checked as Discord checks them). A press
of a button is ``press(message, custom_id)`` (an interaction of type 3), and ``respond``
applies Iris' answer to it as Discord would (type 7 edits the pressed message; type 4 with
flags 64 is a note only the presser sees, kept in ``ephemerals``).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

APPLICATION_ID = "1187261718928101376"
GUILD_ID = "1187261900000000001"
CONTENT_LIMIT = 2000


class _Recorder:
    """Keeps each REST call's method, path and headers (lower-case names) in ``requests``:
    Discord asks bots for ``User-Agent: DiscordBot ($url, $versionNumber)`` on every call."""

    def __init__(self, app: ASGIApp, fake: FakeDiscord) -> None:
        self.app, self.fake = app, fake

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            with self.fake._lock:
                self.fake.requests.append((scope["method"], scope["path"], headers))
        await self.app(scope, receive, send)


def error(status: int, message: str, code: int, **extra: Any) -> JSONResponse:
    return JSONResponse({"message": message, "code": code, **extra}, status_code=status)


def components_problem(components: Any) -> str | None:
    """What Discord's form validation says about a message's ``components`` (action rows of
    buttons), or None when they are valid."""
    if not isinstance(components, list) or len(components) > 5:
        return "components: Must be 5 or fewer in length."
    seen: set[str] = set()
    for row in components:
        if not isinstance(row, dict) or row.get("type") != 1:
            return "components: top-level components must be action rows (type 1)"
        buttons = row.get("components")
        if not isinstance(buttons, list) or not 1 <= len(buttons) <= 5:
            return "components.components: Must be between 1 and 5 in length."
        for button in buttons:
            if not isinstance(button, dict) or button.get("type") != 2:
                return "components.components: only buttons (type 2) are modelled"
            style, custom_id = button.get("style"), button.get("custom_id")
            if style not in (1, 2, 3, 4):
                return "components.components.style: Value must be one of (1, 2, 3, 4)."
            if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 100:
                return "components.components.custom_id: Must be between 1 and 100 in length."
            if custom_id in seen:
                return "components.components.custom_id: Component custom id cannot be duplicated"
            seen.add(custom_id)
            label = button.get("label")
            if label is not None and (not isinstance(label, str) or len(label) > 80):
                return "components.components.label: Must be 80 or fewer in length."
    return None


class FakeDiscord:
    def __init__(self, *, bot_token: str = "discord-bot-token",
                 application_id: str = APPLICATION_ID) -> None:
        self.bot_token = bot_token
        self.application_id = application_id
        self._key = Ed25519PrivateKey.generate()
        self.public_key = self._key.public_key().public_bytes(Encoding.Raw,
                                                              PublicFormat.Raw).hex()
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._tokens: dict[str, dict[str, Any]] = {}  # interaction token → its state
        self._messages: list[dict[str, Any]] = []
        self.ephemerals: list[dict[str, Any]] = []  # type 4 responses with flags 64, by user
        self._rate_limited = 0
        self.commands: list[dict[str, Any]] = []
        self.edits: list[dict[str, Any]] = []  # PATCH /channels/{id}/messages/{id}, in order
        self._failing_edits = 0
        prefix = "/api/v10"
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # method, path, headers
        self.app = Starlette(middleware=[Middleware(_Recorder, fake=self)], routes=[
            Route(prefix + "/webhooks/{app}/{token}/messages/@original", self._edit_original,
                  methods=["PATCH"]),
            Route(prefix + "/webhooks/{app}/{token}", self._follow_up, methods=["POST"]),
            Route(prefix + "/channels/{channel}/messages", self._channel_message,
                  methods=["POST"]),
            Route(prefix + "/channels/{channel}/messages/{message}", self._edit_message,
                  methods=["PATCH"]),
            Route(prefix + "/applications/{app}/commands", self._put_commands, methods=["PUT"]),
        ])

    # interactions, as Discord sends them

    def _snowflake(self) -> str:
        with self._lock:
            return str(1187300000000000000 + next(self._ids))

    def interaction(self, name: str = "ask", options: dict[str, str] | None = None, *,
                    user_id: str = "80351110224678912", username: str = "ada",
                    channel_id: str = "1187262000000000042", guild: bool = False,
                    kind: int = 2) -> dict[str, Any]:
        if name == "ask" and options is None:
            options = {"text": "hello"}
        token = f"aW50ZXJhY3Rpb246{self._snowflake()}:fake-token"
        user = {"id": user_id, "username": username, "global_name": username.title(),
                "discriminator": "0", "avatar": None}
        payload: dict[str, Any] = {
            "id": self._snowflake(), "application_id": self.application_id, "type": kind,
            "token": token, "version": 1, "channel_id": channel_id,
            "channel": {"id": channel_id, "type": 0 if guild else 1},
            "locale": "en-US", "app_permissions": "2248473465835073",
            "entitlements": [], "authorizing_integration_owners": {"0": GUILD_ID},
            "context": 0 if guild else 1,
        }
        if kind == 2:
            payload["data"] = {"id": self._snowflake(), "name": name, "type": 1, "options": [
                {"name": key, "type": 3, "value": value} for key, value in (options or {}).items()
            ]}
        if guild:
            payload["guild_id"] = GUILD_ID
            payload["member"] = {"user": user, "nick": None, "roles": [],
                                 "permissions": "2248473465835073"}
        else:
            payload["user"] = user
        with self._lock:
            self._tokens[token] = {"channel_id": channel_id, "original": None, "expired": False}
        return payload

    def press(self, message: dict[str, Any], custom_id: str, *,
              user_id: str = "80351110224678912", username: str = "ada",
              guild: bool = False) -> dict[str, Any]:
        """A MESSAGE_COMPONENT interaction (type 3): a press of the button ``custom_id`` on the
        bot's ``message``. Its token's original response is that message, as on Discord."""
        channel_id = message["channel_id"]
        payload = self.interaction(user_id=user_id, username=username, channel_id=channel_id,
                                   guild=guild, kind=3)
        payload["data"] = {"custom_id": custom_id, "component_type": 2}
        payload["message"] = self.message(channel_id, message["id"]) or dict(message)
        with self._lock:
            state = self._tokens[payload["token"]]
            state["original"] = next((m for m in self._messages if m["id"] == message["id"]),
                                     None)
            state["component"] = True
        return payload

    def respond(self, interaction: dict[str, Any], response: dict[str, Any]) -> None:
        """Apply Iris' answer to an interaction as Discord does: type 7 edits the message the
        pressed component is on, type 6 acknowledges, type 4 with flags 64 is a note only the
        presser sees. Raises ValueError for a response Discord would refuse ("This
        interaction failed")."""
        kind, data = response.get("type"), response.get("data") or {}
        with self._lock:
            state = self._tokens[interaction["token"]]
        component = state.get("component", False)
        if kind in (6, 7) and not component:
            raise ValueError(f"response type {kind} is only for component interactions")
        if kind == 7:
            problem = components_problem(data["components"]) if "components" in data else None
            if problem is not None:
                raise ValueError(problem)
            with self._lock:
                original = state["original"]
                for key in ("content", "components"):
                    if key in data:
                        original[key] = data[key]
                original["edited_timestamp"] = datetime.now(UTC).isoformat()
        elif kind == 4:
            person = interaction.get("member", {}).get("user") or interaction.get("user") or {}
            note = {"user_id": person.get("id"), "content": data.get("content"),
                    "flags": data.get("flags", 0)}
            with self._lock:
                if note["flags"] & 64:
                    self.ephemerals.append(note)
                else:
                    self._messages.append(self._message(state["channel_id"],
                                                        str(note["content"]), "response", True))
        elif kind not in (1, 5, 6):
            raise ValueError(f"unknown interaction response type {kind}")

    def ping(self) -> dict[str, Any]:
        return {"id": self._snowflake(), "application_id": self.application_id, "type": 1,
                "token": "ping-token", "version": 1}

    def sign(self, body: bytes, timestamp: int | None = None) -> dict[str, str]:
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        signature = self._key.sign(stamp.encode() + body).hex()
        return {"X-Signature-Ed25519": signature, "X-Signature-Timestamp": stamp}

    # test controls and inspection

    def expire(self, token: str) -> None:
        with self._lock:
            self._tokens[token]["expired"] = True

    def rate_limit_next(self, times: int = 1) -> None:
        with self._lock:
            self._rate_limited += times

    def fail_edits(self, times: int = 1) -> None:
        with self._lock:
            self._failing_edits += times

    def messages(self, channel_id: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(m) for m in self._messages
                    if channel_id is None or m["channel_id"] == channel_id]

    def message(self, channel_id: str, message_id: str) -> dict[str, Any] | None:
        with self._lock:
            return next((dict(m) for m in self._messages if m["channel_id"] == channel_id
                         and m["id"] == message_id), None)

    def texts(self, channel_id: str | None = None) -> list[str]:
        return [m["content"] for m in self.messages(channel_id)]

    # the REST API

    def _message(self, channel_id: str, content: str, via: str,
                 webhook: bool, components: list[dict[str, Any]] | None = None
                 ) -> dict[str, Any]:
        message = {
            "id": self._snowflake(), "type": 0 if via == "channel" else 20, "content": content,
            "channel_id": channel_id,
            "author": {"id": self.application_id, "username": "Iris", "bot": True},
            "attachments": [], "embeds": [], "mentions": [], "mention_roles": [],
            "pinned": False, "mention_everyone": False, "tts": False,
            "timestamp": datetime.now(UTC).isoformat(), "edited_timestamp": None, "flags": 0,
            "components": list(components or []), "via": via,
        }
        if webhook:
            message["webhook_id"] = self.application_id
            message["application_id"] = self.application_id
        return message

    async def _body(self, request: Request) -> tuple[dict[str, Any] | None, Response | None]:
        with self._lock:
            if self._rate_limited:
                self._rate_limited -= 1
                return None, JSONResponse({"message": "You are being rate limited.",
                                           "retry_after": 0.25, "global": False},
                                          status_code=429, headers={"Retry-After": "1"})
        try:
            body = json.loads(await request.body())
        except ValueError:
            return None, error(400, "400: Bad Request", 0)
        content = body.get("content") if isinstance(body, dict) else None
        if isinstance(content, str) and len(content) > CONTENT_LIMIT:
            return None, error(400, "Invalid Form Body", 50035, errors={"content": {"_errors": [
                {"code": "BASE_TYPE_MAX_LENGTH",
                 "message": "Must be 2000 or fewer in length."}]}})
        if not isinstance(content, str) or not content:
            return None, error(400, "Cannot send an empty message", 50006)
        problem = components_problem(body["components"]) if "components" in body else None
        if problem is not None:
            return None, error(400, "Invalid Form Body", 50035, errors={"components": {
                "_errors": [{"code": "COMPONENT_INVALID", "message": problem}]}})
        return body, None

    def _interaction(self, request: Request) -> dict[str, Any] | None:
        found = self._tokens.get(request.path_params["token"])
        if request.path_params["app"] != self.application_id or found is None or found[
                "expired"]:
            return None
        return found

    async def _edit_original(self, request: Request) -> Response:
        state = self._interaction(request)
        if state is None:
            return error(404, "Unknown Webhook", 10015)
        body, refused = await self._body(request)
        if refused is not None or body is None:
            return refused or error(400, "400: Bad Request", 0)
        with self._lock:
            if state["original"] is None:
                message = self._message(state["channel_id"], body["content"], "original", True,
                                        body.get("components"))
                state["original"] = message
                self._messages.append(message)
            else:
                state["original"]["content"] = body["content"]
                if "components" in body:
                    state["original"]["components"] = body["components"]
                state["original"]["edited_timestamp"] = datetime.now(UTC).isoformat()
            return JSONResponse(dict(state["original"]))

    async def _follow_up(self, request: Request) -> Response:
        state = self._interaction(request)
        if state is None:
            return error(404, "Unknown Webhook", 10015)
        body, refused = await self._body(request)
        if refused is not None or body is None:
            return refused or error(400, "400: Bad Request", 0)
        message = self._message(state["channel_id"], body["content"], "followup", True,
                                body.get("components"))
        with self._lock:
            self._messages.append(message)
        if request.query_params.get("wait") == "true":
            return JSONResponse(message)
        return Response(status_code=204)

    def _bot(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bot {self.bot_token}"

    async def _channel_message(self, request: Request) -> Response:
        if not self._bot(request):
            return error(401, "401: Unauthorized", 0)
        body, refused = await self._body(request)
        if refused is not None or body is None:
            return refused or error(400, "400: Bad Request", 0)
        message = self._message(request.path_params["channel"], body["content"], "channel",
                                False, body.get("components"))
        with self._lock:
            self._messages.append(message)
        return JSONResponse(message)

    async def _edit_message(self, request: Request) -> Response:
        if not self._bot(request):
            return error(401, "401: Unauthorized", 0)
        try:
            body = json.loads(await request.body())
        except ValueError:
            return error(400, "400: Bad Request", 0)
        if not isinstance(body, dict):
            return error(400, "400: Bad Request", 0)
        problem = components_problem(body["components"]) if "components" in body else None
        if problem is not None:
            return error(400, "Invalid Form Body", 50035, errors={"components": {
                "_errors": [{"code": "COMPONENT_INVALID", "message": problem}]}})
        channel, wanted = request.path_params["channel"], request.path_params["message"]
        with self._lock:
            self.edits.append({"channel_id": channel, "message_id": wanted, "body": body})
            if self._failing_edits:
                self._failing_edits -= 1
                return error(500, "500: Internal Server Error", 0)
            message = next((m for m in self._messages if m["channel_id"] == channel
                            and m["id"] == wanted), None)
            if message is None:
                return error(404, "Unknown Message", 10008)
            if message["author"]["id"] != self.application_id:
                return error(403, "Cannot edit a message authored by another user", 50005)
            for key in ("content", "components"):
                if key in body:
                    message[key] = body[key]
            message["edited_timestamp"] = datetime.now(UTC).isoformat()
            return JSONResponse(dict(message))

    async def _put_commands(self, request: Request) -> Response:
        if not self._bot(request):
            return error(401, "401: Unauthorized", 0)
        if request.path_params["app"] != self.application_id:
            return error(404, "Unknown Application", 10002)
        commands = json.loads(await request.body())
        if not isinstance(commands, list):
            return error(400, "Invalid Form Body", 50035)
        out = []
        for command in commands:
            out.append({"id": self._snowflake(), "application_id": self.application_id,
                        "version": self._snowflake(), "default_member_permissions": None,
                        "type": command.get("type", 1), "nsfw": False, "options": [],
                        **command})
        self.commands = out
        return JSONResponse(out)
