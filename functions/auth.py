"""HTTP errors in OpenAI's shape, and bearer-key authentication."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

from fastapi import Request

from functions.runtime import Runtime


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


def require_api_key(rt: Runtime) -> Callable[[Request], None]:
    def check(request: Request) -> None:
        expected = rt.settings.secret("api_key")
        if not expected:
            raise ApiError(503, "the HTTP API is disabled: IRIS_API_KEY is not set",
                           code="api_disabled")
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise ApiError(401, "missing bearer token: send 'Authorization: Bearer <IRIS_API_KEY>'",
                           code="missing_api_key", kind="authentication_error")
        if not hmac.compare_digest(token.strip().encode(), expected.encode()):
            raise ApiError(401, "incorrect API key", code="invalid_api_key",
                           kind="authentication_error")

    return check
