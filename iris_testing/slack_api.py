"""A fake Slack Web API for tests that drive the real ``slack_sdk`` clients.

::

    slack = FakeSlack()
    with serve(slack.app) as server:
        client = WebClient(token="xoxb-test", base_url=f"{server.url}/api/")
        client.chat_postMessage(channel="C1", text="hi")
    assert slack.posted("C1")[0]["text"] == "hi"

Files people share: ``add_file`` keeps the bytes and returns the file object as it appears in a
``message`` event's ``files`` (``id``, ``name``, ``mimetype``, ``filetype``, ``size``,
``url_private``, ``url_private_download``, …); the URLs serve the bytes to a bearer token with
the ``files:read`` scope and, as Slack does, an HTML sign-in page to any other request.
``public_url`` is where the fake is served (the platform stack sets it).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

TS_BASE = 1700000000


class SlackApiFailure(Exception):
    def __init__(self, error: str, status: int = 200, retry_after: int | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.status = status
        self.retry_after = retry_after


@dataclass
class _Failure:
    times: int
    error: SlackApiFailure


class FakeSlack:
    """In-memory Slack Web API: records every call, answers the methods Iris uses."""

    def __init__(
        self,
        bot_user_id: str = "UBOT",
        team_id: str = "T1",
        *,
        bot_id: str = "BBOT",
        token: str | None = None,
    ) -> None:
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.team_id = team_id
        self.token = token
        self.users: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, dict[str, Any]] = {}
        self._lock = threading.RLock()
        self._calls: list[tuple[str, dict[str, Any]]] = []
        self._posted: list[dict[str, Any]] = []
        self._messages: dict[tuple[str, str], dict[str, Any]] = {}
        self._failures: dict[str, list[_Failure]] = defaultdict(list)
        self._ts = itertools.count(1)
        self._event_ids = itertools.count(1)
        self._methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "reactions.add": self._reactions_add,
            "conversations.info": self._conversation_info,
            "users.info": self._user_info,
        }
        self.public_url = "https://files.slack.com"
        self.files: dict[str, tuple[bytes, str]] = {}
        self.file_readers: set[str] | None = None  # tokens with files:read (None: any token)
        self.file_downloads: list[str] = []
        self.app = Starlette(routes=[
            Route("/api/{method}", self._api, methods=["GET", "POST"]),
            Route("/files-pri/{owner}/{name}", self._file, methods=["GET"]),
            Route("/files-pri/{owner}/download/{name}", self._file, methods=["GET"]),
        ])

    # test controls

    def fail_next(
        self,
        method: str,
        times: int = 1,
        status: int = 429,
        error: str = "ratelimited",
        retry_after: int | None = None,
    ) -> None:
        """Make the next ``times`` calls of ``method`` fail; status 200 gives a logical error."""
        if status == 429 and retry_after is None:
            retry_after = 1
        with self._lock:
            failure = _Failure(times, SlackApiFailure(error, status, retry_after))
            self._failures[method].append(failure)

    def next_ts(self) -> str:
        """A fresh message timestamp, later than every one handed out before."""
        with self._lock:
            micros = next(self._ts) * 100
        return f"{TS_BASE + micros // 1_000_000}.{micros % 1_000_000:06d}"

    # inspection

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return list(self._calls)

    def methods_called(self) -> list[str]:
        return [method for method, _ in self.calls]

    def posted(self, channel: str | None = None) -> list[dict[str, Any]]:
        """Params of the successful chat.postMessage calls, oldest first."""
        with self._lock:
            posted = list(self._posted)
        return [p for p in posted if channel is None or p.get("channel") == channel]

    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        """A message the bot posted, as it now stands (after chat.update), or None."""
        with self._lock:
            return self._messages.get((channel, ts))

    # request builders

    @staticmethod
    def sign(
        body: bytes | str, signing_secret: str, timestamp: int | None = None
    ) -> dict[str, str]:
        """Headers that make ``body`` a validly signed Slack request."""
        raw = body.encode() if isinstance(body, str) else body
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        base = b"v0:" + stamp.encode() + b":" + raw
        digest = hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()
        return {"X-Slack-Signature": f"v0={digest}", "X-Slack-Request-Timestamp": stamp}

    def event_payload(
        self,
        event: dict[str, Any],
        event_id: str | None = None,
        team_id: str | None = None,
        api_app_id: str = "A1",
    ) -> dict[str, Any]:
        """An Events API ``event_callback`` envelope around ``event``."""
        team = team_id or self.team_id
        with self._lock:
            event_id = event_id or f"Ev{next(self._event_ids):08d}"
        return {
            "token": "verification-token",
            "team_id": team,
            "api_app_id": api_app_id,
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(float(event.get("event_ts", time.time()))),
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": team,
                    "user_id": self.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
            "event_context": f"4-{event_id}",
        }

    def message_event(
        self,
        text: str,
        *,
        user: str = "U123",
        channel: str = "C123",
        channel_type: str = "channel",
        ts: str | None = None,
        thread_ts: str | None = None,
    ) -> dict[str, Any]:
        """A ``message`` event; ``channel_type="im"`` for a direct message."""
        return self._event("message", text, user, channel, ts, thread_ts, channel_type)

    def app_mention_event(
        self,
        text: str,
        *,
        user: str = "U123",
        channel: str = "C123",
        ts: str | None = None,
        thread_ts: str | None = None,
    ) -> dict[str, Any]:
        """An ``app_mention`` event; the bot's mention is prepended unless ``text`` has it."""
        mention = f"<@{self.bot_user_id}>"
        if mention not in text:
            text = f"{mention} {text}"
        return self._event("app_mention", text, user, channel, ts, thread_ts, None)

    def add_file(self, name: str, data: bytes, mimetype: str, *, user: str = "U123",
                 filetype: str | None = None) -> dict[str, Any]:
        """Keep a shared file; its object as a ``message`` event's ``files`` carries it."""
        with self._lock:
            file_id = f"F{next(self._event_ids):010d}"
        owner = f"{self.team_id}-{file_id}"
        self.files[owner] = (data, mimetype)
        base = f"{self.public_url}/files-pri/{owner}"
        return {
            "id": file_id, "created": TS_BASE, "timestamp": TS_BASE, "name": name,
            "title": name, "mimetype": mimetype,
            "filetype": filetype or name.rsplit(".", 1)[-1].lower(), "pretty_type": mimetype,
            "user": user, "user_team": self.team_id, "editable": False, "size": len(data),
            "mode": "hosted", "is_external": False, "external_type": "", "is_public": False,
            "public_url_shared": False, "display_as_bot": False, "username": "",
            "url_private": f"{base}/{name}", "url_private_download": f"{base}/download/{name}",
            "permalink": f"https://iris-test.slack.com/files/{user}/{file_id}/{name}",
            "is_starred": False, "has_rich_preview": False, "file_access": "visible",
        }

    def file_event(self, text: str, files: list[dict[str, Any]], **kwargs: Any
                   ) -> dict[str, Any]:
        """A ``message`` event of subtype ``file_share`` carrying ``files``."""
        event = self.message_event(text, **kwargs)
        event.update({"subtype": "file_share", "files": files, "upload": False,
                      "display_as_bot": False})
        return event

    async def _file(self, request: Request) -> Response:
        token = _bearer(request)
        allowed = token is not None and (token == self.token if self.token else True) and (
            self.file_readers is None or token in self.file_readers)
        found = self.files.get(request.path_params["owner"])
        with self._lock:
            self.file_downloads.append(request.url.path)
        if not allowed or found is None:
            page = ("<!DOCTYPE html><html><head><title>Slack</title></head><body>"
                    "Sign in to your workspace</body></html>")
            return Response(page, media_type="text/html; charset=utf-8")
        return Response(found[0], media_type=found[1])

    def block_actions(self, message: dict[str, Any], channel: str, value: str, *,
                      user: str = "U123", action_id: str = "clarify_1") -> dict[str, Any]:
        """A ``block_actions`` interactivity payload: ``user`` pressed the button with
        ``value`` on the bot's ``message`` (as ``message()`` returns it) in ``channel``."""
        with self._lock:
            trigger = f"trig-{next(self._event_ids)}"
        shown = {k: message[k] for k in ("type", "user", "bot_id", "text", "ts", "team",
                                          "blocks", "thread_ts") if k in message}
        container = {"type": "message", "message_ts": message["ts"], "channel_id": channel,
                     "is_ephemeral": False}
        if "thread_ts" in message:
            container["thread_ts"] = message["thread_ts"]
        return {
            "type": "block_actions",
            "user": {"id": user, "username": "ada", "name": "ada", "team_id": self.team_id},
            "api_app_id": "A1", "token": "verification-token", "container": container,
            "trigger_id": trigger, "team": {"id": self.team_id, "domain": "iris-test"},
            "enterprise": None, "is_enterprise_install": False,
            "channel": {"id": channel, "name": "directmessage" if channel[0] == "D" else "general"},
            "message": shown, "state": {"values": {}},
            "response_url": f"https://hooks.slack.com/actions/{self.team_id}/1/x",
            "actions": [{"action_id": action_id, "block_id": "b1", "type": "button",
                         "value": value, "action_ts": self.next_ts(),
                         "text": {"type": "plain_text", "text": "choice", "emoji": True}}],
        }

    def _event(
        self,
        kind: str,
        text: str,
        user: str,
        channel: str,
        ts: str | None,
        thread_ts: str | None,
        channel_type: str | None,
    ) -> dict[str, Any]:
        ts = ts or self.next_ts()
        event: dict[str, Any] = {
            "type": kind,
            "user": user,
            "text": text,
            "ts": ts,
            "team": self.team_id,
            "channel": channel,
            "event_ts": ts,
        }
        if channel_type:
            event["channel_type"] = channel_type
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    # HTTP

    async def _api(self, request: Request) -> Response:
        method = request.path_params["method"]
        params = await _read_params(request)
        token = _bearer(request) or params.get("token")
        with self._lock:
            self._calls.append((method, params))
            try:
                if self.token is not None and token != self.token:
                    raise SlackApiFailure("invalid_auth")
                self._injected_failure(method)
                handler = self._methods.get(method)
                if handler is None:
                    raise SlackApiFailure("unknown_method")
                result = handler(params)
            except SlackApiFailure as failure:
                return _error_response(failure)
        return JSONResponse({"ok": True, **result})

    def _injected_failure(self, method: str) -> None:
        queue = self._failures.get(method)
        if not queue:
            return
        failure = queue[0]
        failure.times -= 1
        if failure.times <= 0:
            queue.pop(0)
        raise failure.error

    # methods (called with the lock held)

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": "https://iris-test.slack.com/",
            "team": "Iris Test",
            "user": "iris",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = params.get("channel")
        if not channel:
            raise SlackApiFailure("channel_not_found")
        if not any(params.get(key) for key in ("text", "blocks", "attachments")):
            raise SlackApiFailure("no_text")
        ts = self.next_ts()
        message: dict[str, Any] = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": self.bot_id,
            "text": params.get("text", ""),
            "ts": ts,
            "team": self.team_id,
        }
        for key in ("blocks", "attachments", "thread_ts"):
            if params.get(key):
                message[key] = params[key]
        self._messages[(channel, ts)] = message
        self._posted.append(params)
        return {"channel": channel, "ts": ts, "message": message}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts = params.get("channel"), params.get("ts")
        message = self._messages.get((str(channel), str(ts)))
        if message is None:
            raise SlackApiFailure("message_not_found")
        for key in ("text", "blocks", "attachments"):
            if key in params:
                message[key] = params[key]
        message["edited"] = {"user": self.bot_user_id, "ts": self.next_ts()}
        return {"channel": channel, "ts": ts, "text": message["text"], "message": message}

    def _reactions_add(self, params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("name"):
            raise SlackApiFailure("invalid_name")
        if not params.get("channel") or not params.get("timestamp"):
            raise SlackApiFailure("no_item_specified")
        return {}

    def _conversation_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel", ""))
        if not channel:
            raise SlackApiFailure("channel_not_found")
        info: dict[str, Any] = {
            "id": channel,
            "name": channel.lower(),
            "is_channel": channel.startswith("C"),
            "is_group": channel.startswith("G"),
            "is_im": channel.startswith("D"),
            "is_private": not channel.startswith("C"),
            "is_member": True,
            "created": TS_BASE,
        }
        return {"channel": {**info, **self.channels.get(channel, {})}}

    def _user_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user_id = str(params.get("user", ""))
        if not user_id:
            raise SlackApiFailure("user_not_found")
        name = user_id.lower()
        user: dict[str, Any] = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name,
            "real_name": f"User {user_id}",
            "tz": "Europe/London",
            "tz_offset": 0,
            "is_bot": user_id == self.bot_user_id,
            "deleted": False,
            "profile": {"real_name": f"User {user_id}", "display_name": name},
        }
        return {"user": {**user, **self.users.get(user_id, {})}}


def _bearer(request: Request) -> str | None:
    authorization = request.headers.get("authorization", "")
    return authorization[7:] if authorization.lower().startswith("bearer ") else None


async def _read_params(request: Request) -> dict[str, Any]:
    params: dict[str, Any] = dict(request.query_params)
    raw = await request.body()
    if not raw:
        return params
    if request.headers.get("content-type", "").startswith("application/json"):
        body = json.loads(raw)
        if isinstance(body, dict):
            params.update(body)
    else:
        params.update(parse_qsl(raw.decode(), keep_blank_values=True))
    for key in ("blocks", "attachments"):
        value = params.get(key)
        if isinstance(value, str) and value[:1] == "[":
            params[key] = json.loads(value)
    return params


def _error_response(failure: SlackApiFailure) -> JSONResponse:
    headers = {}
    if failure.retry_after is not None:
        headers["Retry-After"] = str(failure.retry_after)
    return JSONResponse({"ok": False, "error": failure.error}, failure.status, headers=headers)
