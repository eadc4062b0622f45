"""HTTP errors in OpenAI's shape, and the keys that guard the HTTP APIs.

Two keys, two doors: ``IRIS_API_KEY`` opens the chat API (``/v1/…``), ``IRIS_ADMIN_API_KEY`` the
admin and search APIs (``/api/…``), which read and write any user's data. The check runs on the
request line and headers alone, before a byte of the body is read (``functions.app.Guard``).
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.config import Settings


class ApiError(Exception):
    def __init__(self, status: int, message: str, *, code: str | None = None,
                 param: str | None = None, kind: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.kind = kind or ("invalid_request_error" if status < 500 else "server_error")

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param,
                          "code": self.code}}


@dataclass(frozen=True)
class Door:
    prefix: str
    key: str  # the Settings secret that opens it
    what: str


DOORS = (
    Door("/v1/", "api_key", "the HTTP API"),
    Door("/api/", "admin_api_key", "the admin API"),
)


def door_for(path: str) -> Door | None:
    return next((door for door in DOORS if path.startswith(door.prefix)), None)


def check_key(settings: Settings, door: Door, headers: Iterable[tuple[bytes, bytes]]) -> None:
    """Raise ApiError unless the request's bearer token opens ``door``."""
    expected = settings.secret(door.key)
    if not expected:
        env = f"IRIS_{door.key.upper()}"
        raise ApiError(503, f"{door.what} is disabled: {env} is not set",
                       code="api_disabled")
    header = next((value for name, value in headers if name == b"authorization"), b"")
    scheme, _, token = header.decode("latin-1").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiError(401, f"missing bearer token: send 'Authorization: Bearer "
                       f"<IRIS_{door.key.upper()}>'", code="missing_api_key",
                       kind="authentication_error")
    if hmac.compare_digest(token.encode(), expected.encode()):
        return
    for other in DOORS:
        held = settings.secret(other.key)
        if other is not door and held and hmac.compare_digest(token.encode(), held.encode()):
            raise ApiError(403, f"this key opens {other.what}, not {door.what} (use "
                           f"IRIS_{door.key.upper()})", code="wrong_api_key",
                           kind="permission_error")
    raise ApiError(401, "incorrect API key", code="invalid_api_key", kind="authentication_error")
