"""A fake Telegram Bot API for tests that drive python-telegram-bot's real ``Bot``.

::

    telegram = FakeTelegram()
    with serve(telegram.app) as server:
        bot = Bot("123:abc", base_url=f"{server.url}/bot", base_file_url=f"{server.url}/file/bot")
        await bot.send_message(chat_id=42, text="hi")
    assert telegram.sent_messages(42)[0]["text"] == "hi"

Like Telegram, it delivers updates to the registered webhook (``deliver``) only when their type
is among the webhook's ``allowed_updates`` (Bot API, setWebhook: a call without the list keeps
the previous one; none ever registered: every type but ``chat_member``, ``message_reaction``
and ``message_reaction_count``). ``tunnel`` stands for the public https address: the
registered URL's scheme and host are replaced by it (a loopback ``http://`` server).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from iris_testing.telegram_wire import (
    TelegramApiError,
    as_int,
    chat_json,
    error_response,
    read_params,
)

MAX_MESSAGE_LENGTH = 4096
NOT_SENT_BY_DEFAULT = frozenset({"chat_member", "message_reaction", "message_reaction_count"})


@dataclass
class _Failure:
    times: int
    error: TelegramApiError


_DEFAULT_DESCRIPTIONS = {
    400: "Bad Request: chat not found",
    401: "Unauthorized",
    403: "Forbidden: bot was blocked by the user",
    429: "Too Many Requests: retry after {retry_after}",
    500: "Internal Server Error",
    502: "Bad Gateway",
}


class FakeTelegram:
    """In-memory Bot API: records every call, answers the methods Iris uses."""

    def __init__(
        self,
        *,
        token: str | None = None,
        bot_id: int = 7000001,
        bot_username: str = "iris_test_bot",
    ) -> None:
        self.token = token
        self.bot_user = {
            "id": bot_id,
            "is_bot": True,
            "first_name": "Iris",
            "username": bot_username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }
        self.reject_markdown = False
        self._lock = threading.RLock()
        self._calls: list[tuple[str, dict[str, Any]]] = []
        self._sent: list[dict[str, Any]] = []
        self._messages: dict[tuple[str, int], dict[str, Any]] = {}
        self._files: dict[str, tuple[str, bytes]] = {}
        self._failures: dict[str, list[_Failure]] = defaultdict(list)
        self._webhook: dict[str, Any] | None = None
        self._allowed_updates: list[str] | None = None  # survives setWebhook calls without it
        self._withheld: list[dict[str, Any]] = []
        self.tunnel: str | None = None
        self._webhook_error: tuple[int, str] | None = None
        self._message_ids = itertools.count(1)
        self._update_ids = itertools.count(100001)
        self._methods: dict[str, Callable[[dict[str, Any]], Any]] = {
            "getme": lambda params: self.bot_user,
            "sendmessage": self._send_message,
            "sendchataction": lambda params: True,
            "editmessagetext": self._edit_message_text,
            "setwebhook": self._set_webhook,
            "deletewebhook": self._delete_webhook,
            "getwebhookinfo": self._webhook_info,
            "getfile": self._get_file,
            "setmycommands": lambda params: True,
            "answercallbackquery": self._answer_callback,
            "editmessagereplymarkup": self._edit_reply_markup,
            "sendvoice": lambda params: self._send_media("voice", params),
            "sendaudio": lambda params: self._send_media("audio", params),
        }
        self._media: list[dict[str, Any]] = []
        self._answered: dict[str, dict[str, Any]] = {}
        self.app = Starlette(
            routes=[
                Route("/bot{token}/{method}", self._api, methods=["GET", "POST"]),
                Route("/file/bot{token}/{path:path}", self._download, methods=["GET"]),
            ]
        )

    # test controls

    def fail_next(
        self,
        method: str,
        times: int = 1,
        error_code: int = 500,
        description: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        if error_code == 429 and retry_after is None:
            retry_after = 1
        text = description or _DEFAULT_DESCRIPTIONS.get(error_code, f"Error {error_code}")
        error = TelegramApiError(error_code, text.format(retry_after=retry_after), retry_after)
        with self._lock:
            self._failures[method.lower()].append(_Failure(times, error))

    def webhook_failed(self, message: str, at: int) -> None:
        """Telegram could not deliver to the webhook: getWebhookInfo's ``last_error_date``
        (Unix time) and ``last_error_message`` say so from now on."""
        with self._lock:
            self._webhook_error = (at, message)

    def add_file(self, file_id: str, data: bytes, file_path: str | None = None) -> None:
        with self._lock:
            self._files[file_id] = (file_path or f"documents/{file_id}.bin", data)

    def deliver(self, update: dict[str, Any]) -> httpx.Response | None:
        """POST ``update`` to the registered webhook with its secret token, as Telegram does;
        None (and kept in ``withheld``) when the webhook did not ask for its type."""
        kind = next(key for key in update if key != "update_id")
        with self._lock:
            webhook = dict(self._webhook) if self._webhook else None
            allowed = self._allowed_updates
            if webhook is None:
                raise RuntimeError("no webhook is set: Telegram would keep the update for "
                                   "getUpdates")
            if (kind in NOT_SENT_BY_DEFAULT) if not allowed else (kind not in allowed):
                self._withheld.append(update)
                return None
        url = str(webhook["url"])
        if self.tunnel:
            parts = urlsplit(url)
            url = self.tunnel.rstrip("/") + urlunsplit(
                ("", "", parts.path, parts.query, ""))
        headers = {"Content-Type": "application/json"}
        if webhook.get("secret_token"):
            headers["X-Telegram-Bot-Api-Secret-Token"] = str(webhook["secret_token"])
        return httpx.post(url, content=json.dumps(update), headers=headers, timeout=30)

    @property
    def withheld(self) -> list[dict[str, Any]]:
        """Updates ``deliver`` did not send: their type was not asked for."""
        with self._lock:
            return list(self._withheld)

    # inspection

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return list(self._calls)

    def methods_called(self) -> list[str]:
        return [method for method, _ in self.calls]

    def sent_messages(self, chat_id: int | str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            sent = list(self._sent)
        return [p for p in sent if chat_id is None or str(p.get("chat_id")) == str(chat_id)]

    def sent_media(self, chat_id: int | str | None = None) -> list[dict[str, Any]]:
        """sendVoice/sendAudio calls: ``kind``, ``chat_id`` and the uploaded ``data``."""
        with self._lock:
            media = list(self._media)
        return [m for m in media if chat_id is None or str(m["chat_id"]) == str(chat_id)]

    def answered_callbacks(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return dict(self._answered)

    def message(self, chat_id: int | str, message_id: int) -> dict[str, Any] | None:
        """The bot's message as it now stands (after edits), or None."""
        with self._lock:
            return self._messages.get((str(chat_id), message_id))

    @property
    def webhook(self) -> dict[str, Any] | None:
        """Parameters of the last setWebhook, None when no webhook is set."""
        with self._lock:
            return None if self._webhook is None else dict(self._webhook)

    # update builders

    def make_update(
        self,
        text: str | None,
        *,
        chat_id: int | None = None,
        user_id: int = 4242,
        chat_type: str = "private",
        message_id: int | None = None,
        update_id: int | None = None,
        reply_to: int | dict[str, Any] | None = None,
        entities: list[dict[str, Any]] | None = None,
        voice: dict[str, Any] | None = None,
        first_name: str = "Ada",
        username: str | None = "ada",
    ) -> dict[str, Any]:
        """An Update JSON as Telegram would POST it to the webhook."""
        if chat_id is None:
            chat_id = user_id if chat_type == "private" else -1001000000001
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if username:
            user["username"] = username
        user["language_code"] = "en"
        with self._lock:
            message_id = message_id or next(self._message_ids)
            update_id = update_id or next(self._update_ids)
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": user,
            "chat": chat_json(chat_id, chat_type, user),
            "date": int(time.time()),
        }
        if text is not None:
            message["text"] = text
            if entities is None and text.startswith("/"):
                command = text.split()[0]
                entities = [{"type": "bot_command", "offset": 0, "length": len(command)}]
            if entities:
                message["entities"] = entities
        if voice is not None:
            message["voice"] = {
                "file_id": "voice-1",
                "file_unique_id": f"unique-{voice.get('file_id', 'voice-1')}",
                "duration": 2,
                "mime_type": "audio/ogg",
                **voice,
            }
        if reply_to is not None:
            message["reply_to_message"] = (
                reply_to if isinstance(reply_to, dict) else self._bot_message(chat_id, reply_to)
            )
        return {"update_id": update_id, "message": message}

    def make_press(self, message: dict[str, Any], data: str, *, user_id: int = 4242,
                   first_name: str = "Ada") -> dict[str, Any]:
        """An Update with a ``callback_query``: a press of a button on the bot's ``message``."""
        with self._lock:
            update_id = next(self._update_ids)
            query_id = f"cbq-{update_id}"
        user = {"id": user_id, "is_bot": False, "first_name": first_name}
        return {"update_id": update_id, "callback_query": {
            "id": query_id, "from": user, "message": message,
            "chat_instance": f"ci-{message['chat']['id']}", "data": data}}

    # HTTP

    async def _api(self, request: Request) -> Response:
        method = request.path_params["method"]
        params = await read_params(request)
        with self._lock:
            self._calls.append((method, params))
            try:
                if self.token is not None and request.path_params["token"] != self.token:
                    raise TelegramApiError(401, "Unauthorized")
                self._injected_failure(method)
                handler = self._methods.get(method.lower())
                if handler is None:
                    raise TelegramApiError(404, "Not Found: method not found")
                result = handler(params)
            except TelegramApiError as error:
                return error_response(error)
        return JSONResponse({"ok": True, "result": result})

    async def _download(self, request: Request) -> Response:
        path = request.path_params["path"]
        with self._lock:
            tokens_match = self.token is None or request.path_params["token"] == self.token
            data = next((d for p, d in self._files.values() if p == path), None)
        if data is None or not tokens_match:
            return JSONResponse({"ok": False, "error_code": 404, "description": "Not Found"}, 404)
        return Response(data, media_type="application/octet-stream")

    def _injected_failure(self, method: str) -> None:
        queue = self._failures.get(method.lower())
        if not queue:
            return
        failure = queue[0]
        failure.times -= 1
        if failure.times <= 0:
            queue.pop(0)
        raise failure.error

    # methods (called with the lock held)

    def _send_message(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        text = params.get("text")
        if chat_id in (None, ""):
            raise TelegramApiError(400, "Bad Request: chat_id is empty")
        if not text or not str(text).strip():
            raise TelegramApiError(400, "Bad Request: message text is empty")
        if len(str(text)) > MAX_MESSAGE_LENGTH:
            raise TelegramApiError(400, "Bad Request: message is too long")
        self._check_markdown(params)
        message = self._bot_message(chat_id, next(self._message_ids), str(text))
        for key in ("entities", "reply_markup"):
            if key in params:
                message[key] = params[key]
        self._messages[(str(chat_id), message["message_id"])] = message
        self._sent.append(params)
        return message

    def _edit_message_text(self, params: dict[str, Any]) -> dict[str, Any]:
        key = (str(params.get("chat_id")), as_int(params.get("message_id")))
        message = self._messages.get(key)
        if message is None:
            raise TelegramApiError(400, "Bad Request: message to edit not found")
        text = str(params.get("text") or "")
        if not text.strip():
            raise TelegramApiError(400, "Bad Request: message text is empty")
        if text == message["text"]:
            raise TelegramApiError(
                400,
                "Bad Request: message is not modified: specified new message content and reply "
                "markup are exactly the same as a current content and reply markup of the message",
            )
        self._check_markdown(params)
        message.update(text=text, edit_date=int(time.time()))
        return message

    def _answer_callback(self, params: dict[str, Any]) -> bool:
        query_id = str(params.get("callback_query_id") or "")
        if not query_id.startswith("cbq-"):
            raise TelegramApiError(400, "Bad Request: query is too old and response timeout "
                                        "expired or query ID is invalid")
        if query_id in self._answered:
            raise TelegramApiError(400, "Bad Request: query ID is invalid")
        self._answered[query_id] = params
        return True

    def _edit_reply_markup(self, params: dict[str, Any]) -> dict[str, Any]:
        key = (str(params.get("chat_id")), as_int(params.get("message_id")))
        message = self._messages.get(key)
        if message is None:
            raise TelegramApiError(400, "Bad Request: message to edit not found")
        markup = params.get("reply_markup")
        if markup == message.get("reply_markup") or (not markup and "reply_markup" not in message):
            raise TelegramApiError(400, "Bad Request: message is not modified")
        if markup:
            message["reply_markup"] = markup
        else:
            message.pop("reply_markup", None)
        return message

    def _send_media(self, kind: str, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        data = params.get(kind)
        if chat_id in (None, ""):
            raise TelegramApiError(400, "Bad Request: chat_id is empty")
        if not isinstance(data, bytes) or not data:
            raise TelegramApiError(400, f"Bad Request: there is no {kind} in the request")
        message = self._bot_message(chat_id, next(self._message_ids))
        del message["text"]
        message[kind] = {"file_id": f"{kind}-{message['message_id']}", "duration": 1,
                         "file_unique_id": f"u-{kind}-{message['message_id']}",
                         "mime_type": "audio/ogg" if kind == "voice" else "audio/mpeg"}
        self._media.append({"kind": kind, "chat_id": chat_id, "data": data,
                            "message_id": message["message_id"]})
        return message

    def _check_markdown(self, params: dict[str, Any]) -> None:
        if self.reject_markdown and params.get("parse_mode"):
            raise TelegramApiError(
                400,
                "Bad Request: can't parse entities: Can't find end of the entity starting at "
                "byte offset 0",
            )

    def _set_webhook(self, params: dict[str, Any]) -> bool:
        url = params.get("url")
        if url and not str(url).startswith("https://"):
            raise TelegramApiError(
                400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
            )
        if "allowed_updates" in params:
            allowed = params["allowed_updates"]
            if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
                raise TelegramApiError(400, "Bad Request: can't parse allowed updates")
            self._allowed_updates = allowed
        self._webhook = params if url else None
        return True

    def _delete_webhook(self, params: dict[str, Any]) -> bool:
        self._webhook = None
        return True

    def _webhook_info(self, params: dict[str, Any]) -> dict[str, Any]:
        webhook = self._webhook or {}
        info: dict[str, Any] = {
            "url": webhook.get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": 0,
        }
        for key in ("max_connections", "ip_address"):
            if key in webhook:
                info[key] = webhook[key]
        if webhook and self._allowed_updates:
            info["allowed_updates"] = list(self._allowed_updates)
        if self._webhook_error is not None:
            info["last_error_date"], info["last_error_message"] = self._webhook_error
        return info

    def _get_file(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = str(params.get("file_id"))
        if file_id not in self._files:
            raise TelegramApiError(400, "Bad Request: invalid file_id")
        path, data = self._files[file_id]
        return {
            "file_id": file_id,
            "file_unique_id": f"unique-{file_id}",
            "file_size": len(data),
            "file_path": path,
        }

    def _bot_message(self, chat_id: int | str, message_id: int, text: str = "") -> dict[str, Any]:
        chat_type = "private" if as_int(chat_id) > 0 else "supergroup"
        return {
            "message_id": message_id,
            "from": self.bot_user,
            "chat": chat_json(chat_id, chat_type, None),
            "date": int(time.time()),
            "text": text,
        }
