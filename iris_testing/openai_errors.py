"""OpenAI's error bodies as the scripted server answers them: the message, type, param and code
the real API gives for each status (a generic ``api_error`` for the others)."""

from __future__ import annotations

from typing import Any

_ERRORS: dict[int, tuple[str, str, str | None, str | None]] = {
    400: (
        "This model's maximum context length is 8192 tokens. However, your messages resulted "
        "in 9000 tokens. Please reduce the length of the messages.",
        "invalid_request_error",
        "messages",
        "context_length_exceeded",
    ),
    401: (
        "Incorrect API key provided. You can find your API key in your account settings.",
        "invalid_request_error",
        None,
        "invalid_api_key",
    ),
    403: ("You are not allowed to use this model.", "invalid_request_error", None, None),
    404: ("The model does not exist.", "invalid_request_error", "model", "model_not_found"),
    429: (
        "Rate limit reached for requests. Please try again in 1s.",
        "requests",
        None,
        "rate_limit_exceeded",
    ),
    500: ("The server had an error while processing your request.", "server_error", None, None),
    503: (
        "The engine is currently overloaded, please try again later.",
        "server_error",
        None,
        None,
    ),
}


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    default, kind, param, code = _ERRORS.get(status, (f"HTTP {status}", "api_error", None, None))
    return {"error": {"message": message or default, "type": kind, "param": param, "code": code}}
