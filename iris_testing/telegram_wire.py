"""The Bot API's wire format as the fake Telegram reads and answers it: request parameters
(query string, form, multipart or JSON, with JSON-encoded objects), error bodies
(``{"ok": false, "error_code", "description", "parameters"}``) and chat objects."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse

TEXT_PARAMS = frozenset(
    {"text", "caption", "secret_token", "url", "parse_mode", "action", "file_id", "description"}
)


class TelegramApiError(Exception):
    def __init__(self, error_code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.retry_after = retry_after


def chat_json(chat_id: int | str, chat_type: str, user: dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(chat_id, str) and chat_id.startswith("@"):
        return {"id": -1001000000099, "type": "channel", "username": chat_id[1:]}
    chat: dict[str, Any] = {"id": as_int(chat_id), "type": chat_type}
    if chat_type == "private":
        chat["first_name"] = (user or {}).get("first_name", "Ada")
    else:
        chat["title"] = "Test group"
    return chat


def as_int(value: object) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


def _decode(key: str, value: str) -> Any:
    if key in TEXT_PARAMS:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


async def read_params(request: Request) -> dict[str, Any]:
    params: dict[str, Any] = {k: _decode(k, v) for k, v in request.query_params.items()}
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("application/json"):
        body = await request.json()
        if isinstance(body, dict):
            params.update(
                (k, _decode(k, v) if isinstance(v, str) and v[:1] in "{[" else v)
                for k, v in body.items()
            )
    elif content_type.startswith("multipart/form-data"):
        form = await request.form()
        for key, value in form.multi_items():
            params[key] = _decode(key, value) if isinstance(value, str) else await value.read()
    else:
        raw = (await request.body()).decode()
        params.update((k, _decode(k, v)) for k, v in parse_qsl(raw, keep_blank_values=True))
    return params


def error_response(error: TelegramApiError) -> JSONResponse:
    body: dict[str, Any] = {
        "ok": False,
        "error_code": error.error_code,
        "description": error.description,
    }
    if error.retry_after is not None:
        body["parameters"] = {"retry_after": error.retry_after}
    return JSONResponse(body, error.error_code)
