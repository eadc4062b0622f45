"""One way a webhook turns a request body into its pydantic model: a body that does not fit is
a 400 naming the first field that failed (``entry.0.changes: Field required``) or "not valid
JSON", never a 500 or a stack trace. Light enough for the ack path (pydantic only)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from functions.auth import ApiError

M = TypeVar("M", bound=BaseModel)


def invalid(exc: ValidationError, what: str, code: str) -> ApiError:
    """The 400 for a body that is not ``what`` (e.g. "a Telegram update")."""
    first: dict[str, Any] = dict(exc.errors()[0]) if exc.errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ())) or "body"
    problem = "not valid JSON" if first.get("type") == "json_invalid" else first.get("msg")
    return ApiError(400, f"not {what}: {where}: {problem}", code=code)


def parse_json(model: type[M], body: bytes | str, what: str, code: str) -> M:
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise invalid(exc, what, code) from None


def parse_data(model: type[M], data: Any, what: str, code: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(exc, what, code) from None
