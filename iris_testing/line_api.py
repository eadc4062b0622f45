"""A fake LINE Messaging API for tests that drive Iris' real LINE sender over HTTP, answering in
LINE's shapes (reference: developers.line.biz/en/reference/messaging-api, "Send reply
message", "Send push message", "Get content"; developers.line.biz/en/docs/messaging-api/
retrying-api-request):

- ``POST /v2/bot/message/reply`` ``{"replyToken", "messages"}`` → ``{"sentMessages": [{"id",
  "quoteToken"}]}``; a token this fake did not issue, already used or expired is refused
  ``400 {"message": "Invalid reply token"}``; an ``X-Line-Retry-Key`` there is refused 400.
- ``POST /v2/bot/message/push`` ``{"to", "messages"}``, optionally with ``X-Line-Retry-Key``
  (a UUID): a key already accepted is answered ``409`` with the first call's ``sentMessages``
  and ``x-line-accepted-request-id``, and nothing is sent again.
- both check 1-5 messages, text messages of 1-5,000 characters, a ``quickReply`` of at most 13
  postback/message actions with labels of at most 20 characters and data of at most 300
  (``400 {"message": "The request body has 1 error(s)", "details": [{"message", "property"}]}``);
  a wrong bearer token is ``401 {"message": "Authentication failed..."}``.
- ``GET /v2/bot/message/{messageId}/content`` (LINE serves it from ``api-data.line.me``; the fake
  serves both hosts' paths) → the bytes registered with ``add_content``, 404 otherwise.

It also builds webhook bodies as LINE sends them (``message_event``, ``postback_event``,
``webhook``) and signs them (``sign``: base64 HMAC-SHA256 of the body with the channel secret).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import threading
import time
import uuid
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

TEXT_LIMIT = 5000
MAX_MESSAGES = 5
MAX_QUICK_ITEMS = 13
LABEL_LIMIT = 20
DATA_LIMIT = 300
USER = "U" + "4af4980629a1b2c3d4e5f60718293a4b"
BOT = "U" + "0123456789abcdef0123456789abcdef"


def line_error(
    status: int, message: str, details: list[dict[str, str]] | None = None, **extra: Any
) -> JSONResponse:
    body: dict[str, Any] = {"message": message, **extra}
    if details:
        body["details"] = details
    return JSONResponse(body, status_code=status, headers={"x-line-request-id": str(uuid.uuid4())})


def messages_problem(messages: Any) -> dict[str, str] | None:
    """The first problem LINE would report with a ``messages`` array, or None."""
    if not isinstance(messages, list) or not 1 <= len(messages) <= MAX_MESSAGES:
        return {"message": f"Size must be between 1 and {MAX_MESSAGES}", "property": "messages"}
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("type") != "text":
            return {
                "message": "Must be one of the following values: [text, ...]",
                "property": f"messages[{i}].type",
            }
        text = msg.get("text")
        if not isinstance(text, str) or not 1 <= len(text) <= TEXT_LIMIT:
            return {
                "message": f"Length must be between 1 and {TEXT_LIMIT}",
                "property": f"messages[{i}].text",
            }
        quick = msg.get("quickReply")
        if quick is None:
            continue
        items = quick.get("items") if isinstance(quick, dict) else None
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_QUICK_ITEMS:
            return {
                "message": f"Size must be between 1 and {MAX_QUICK_ITEMS}",
                "property": f"messages[{i}].quickReply.items",
            }
        for j, item in enumerate(items):
            action = item.get("action") if isinstance(item, dict) else None
            where = f"messages[{i}].quickReply.items[{j}].action"
            if not isinstance(action, dict) or action.get("type") not in ("postback", "message"):
                return {"message": "Invalid action type", "property": where}
            label = action.get("label")
            if not isinstance(label, str) or not 1 <= len(label) <= LABEL_LIMIT:
                return {
                    "message": f"Length must be between 1 and {LABEL_LIMIT}",
                    "property": f"{where}.label",
                }
            data = action.get("data", "")
            if action["type"] == "postback" and not (
                isinstance(data, str) and 1 <= len(data) <= DATA_LIMIT
            ):
                return {
                    "message": f"Length must be between 1 and {DATA_LIMIT}",
                    "property": f"{where}.data",
                }
    return None


class FakeLine:
    def __init__(self, *, token: str, channel_secret: str) -> None:
        self.token = token
        self.channel_secret = channel_secret
        self.content: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._sent: list[dict[str, Any]] = []  # {"to", "via", "message"}
        self._tokens: dict[str, str] = {}  # issued reply token → chat id
        self._used: set[str] = set()
        self._accepted: dict[str, list[dict[str, str]]] = {}  # retry key → sentMessages
        self._failures: list[int] = []
        self._ids = itertools.count(1)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.app = Starlette(
            routes=[
                Route("/v2/bot/message/reply", self._reply, methods=["POST"]),
                Route("/v2/bot/message/push", self._push, methods=["POST"]),
                Route("/v2/bot/message/{message_id}/content", self._content, methods=["GET"]),
            ]
        )

    # test controls

    def fail_next(self, times: int = 1, status: int = 500) -> None:
        with self._lock:
            self._failures.extend([status] * times)

    def expire(self, reply_token: str) -> None:
        with self._lock:
            self._used.add(reply_token)

    def add_content(self, message_id: str, data: bytes) -> None:
        self.content[message_id] = data

    def sent(self, to: str | None = None, via: str | None = None) -> list[str]:
        with self._lock:
            return [
                s["message"]["text"]
                for s in self._sent
                if (to is None or s["to"] == to) and (via is None or s["via"] == via)
            ]

    def sent_messages(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(s["message"]) for s in self._sent]

    @staticmethod
    def sign(body: bytes, secret: str) -> dict[str, str]:
        digest = hmac.new(secret.encode(), body, hashlib.sha256).digest()
        return {"x-line-signature": base64.b64encode(digest).decode()}

    def _event(
        self,
        kind: str,
        *,
        user: str,
        group: str | None,
        redelivery: bool,
        event_id: str | None,
        timestamp_ms: int | None,
    ) -> dict[str, Any]:
        source: dict[str, Any] = {"type": "user", "userId": user}
        if group is not None:
            source = {"type": "group", "groupId": group, "userId": user}
        token = uuid.uuid4().hex
        with self._lock:
            self._tokens[token] = group or user
        return {
            "type": kind,
            "mode": "active",
            "timestamp": timestamp_ms if timestamp_ms is not None else int(time.time() * 1000),
            "source": source,
            "replyToken": token,
            "webhookEventId": event_id or "01" + uuid.uuid4().hex[:24].upper(),
            "deliveryContext": {"isRedelivery": redelivery},
        }

    def message_event(
        self,
        text: str | None,
        *,
        user: str = USER,
        group: str | None = None,
        kind: str = "text",
        message_id: str | None = None,
        redelivery: bool = False,
        event_id: str | None = None,
        timestamp_ms: int | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        event = self._event(
            "message",
            user=user,
            group=group,
            redelivery=redelivery,
            event_id=event_id,
            timestamp_ms=timestamp_ms,
        )
        message: dict[str, Any] = {
            "id": message_id or str(4_680_000_000_000 + next(self._ids)),
            "type": kind,
            "quoteToken": uuid.uuid4().hex,
            **fields,
        }
        if text is not None:
            message["text"] = text
        event["message"] = message
        return event

    def postback_event(
        self, data: str, *, user: str = USER, group: str | None = None
    ) -> dict[str, Any]:
        event = self._event(
            "postback", user=user, group=group, redelivery=False, event_id=None, timestamp_ms=None
        )
        event["postback"] = {"data": data}
        return event

    @staticmethod
    def webhook(*events: dict[str, Any]) -> dict[str, Any]:
        return {"destination": BOT, "events": list(events)}

    # the Messaging API

    def _check(self, request: Request) -> JSONResponse | None:
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return line_error(
                401,
                "Authentication failed. Confirm that the access token in the "
                "authorization header is valid.",
            )
        with self._lock:
            if self._failures:
                return line_error(self._failures.pop(0), "An error occurred in the server.")
        return None

    async def _body(self, request: Request) -> tuple[dict[str, Any] | None, JSONResponse | None]:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return None, line_error(
                400,
                "The request body has 1 error(s)",
                [{"message": "Invalid JSON", "property": ""}],
            )
        problem = messages_problem(body.get("messages") if isinstance(body, dict) else None)
        if problem is not None:
            return None, line_error(400, "The request body has 1 error(s)", [problem])
        return body, None

    def _record(self, to: str, via: str, messages: list[dict[str, Any]]) -> list[dict[str, str]]:
        sent = []
        for message in messages:
            ident = str(5_000_000_000_000 + next(self._ids))
            self._sent.append({"to": to, "via": via, "message": message})
            sent.append({"id": ident, "quoteToken": uuid.uuid4().hex})
        return sent

    async def _reply(self, request: Request) -> Response:
        refused = self._check(request)
        if refused is not None:
            return refused
        if "x-line-retry-key" in request.headers:
            return line_error(400, "The retry key is not supported for this API")
        body, bad = await self._body(request)
        if bad is not None or body is None:
            return bad or line_error(400, "bad request")
        token = str(body.get("replyToken") or "")
        with self._lock:
            self.calls.append(("reply", body))
            chat = self._tokens.get(token)
            if chat is None or token in self._used:
                return line_error(400, "Invalid reply token")
            self._used.add(token)
            sent = self._record(chat, "reply", body["messages"])
        return JSONResponse({"sentMessages": sent})

    async def _push(self, request: Request) -> Response:
        refused = self._check(request)
        if refused is not None:
            return refused
        body, bad = await self._body(request)
        if bad is not None or body is None:
            return bad or line_error(400, "bad request")
        key = request.headers.get("x-line-retry-key")
        if key is not None:
            try:
                uuid.UUID(key)
            except ValueError:
                return line_error(400, "The retry key must be a UUID")
        to = str(body.get("to") or "")
        if not to:
            return line_error(
                400,
                "The request body has 1 error(s)",
                [{"message": "Must not be empty", "property": "to"}],
            )
        with self._lock:
            self.calls.append(("push", body))
            if key is not None and key in self._accepted:
                return line_error(
                    409, "The retry key is already accepted", sentMessages=self._accepted[key]
                )
            sent = self._record(to, "push", body["messages"])
            if key is not None:
                self._accepted[key] = sent
        return JSONResponse({"sentMessages": sent})

    async def _content(self, request: Request) -> Response:
        refused = self._check(request)
        if refused is not None:
            return refused
        data = self.content.get(request.path_params["message_id"])
        if data is None:
            return line_error(404, "Not found")
        return Response(data, media_type="image/jpeg")
