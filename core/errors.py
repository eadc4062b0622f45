"""The three families of errors, translated at the edges (CLI exit, HTTP status, chat reply).

- ``ToolRetry``: a signal to the model. Raised inside a tool; the turn sends the message back to
  the model as the tool's result and the loop continues.
- ``IrisUsageError`` and ``ConfigError``: a mistake of the person running or calling Iris (bad
  config, bad input). Shown as one clear line; nothing is changed.
- ``ProviderError``: a failure of the run, e.g. the model provider timed out or refused the key.
"""

from __future__ import annotations


class IrisError(Exception):
    """Base class of every error Iris raises on purpose."""


class ToolRetry(IrisError):
    """A tool call failed in a way the model can fix; the message goes back to the model."""


class IrisUsageError(IrisError):
    """Bad input from a user or caller: explained, never retried, nothing stored."""


class ConfigError(IrisUsageError):
    """A configuration value is wrong. ``setting`` names it (e.g. ``IRIS_DB_URL``)."""

    def __init__(self, setting: str, problem: str) -> None:
        super().__init__(f"{setting}: {problem}")
        self.setting = setting
        self.problem = problem


class NotFound(IrisUsageError):
    """A named thing (user, session, job, skill) does not exist for this user."""


class ProviderError(IrisError):
    """The model provider failed. ``kind`` is one of: auth, rate_limit, timeout, unavailable,
    bad_request, context_window, unknown. ``retryable`` says whether trying again may help."""

    def __init__(self, kind: str, message: str, *, retryable: bool, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable
        self.status = status

    def user_message(self) -> str:
        hints = {
            "auth": "The model provider rejected the API key. Check IRIS_MODEL_API_KEY.",
            "rate_limit": "The model provider is rate-limiting requests. Try again in a minute.",
            "timeout": "The model provider did not answer in time. Try again.",
            "unavailable": "The model provider is unavailable right now. Try again shortly.",
            "bad_request": "The model provider refused the request.",
            "context_window": "The conversation is too long for the model. Send /new or /compress.",
            "not_found": "The configured model was not found. Check IRIS_MODEL.",
        }
        hint = hints.get(self.kind, "The model call failed.")
        return f"{hint} ({self})"


class TookTooLong(IrisError):
    """Blocking work overran its deadline and was given up (``core.lanes``): the caller goes on
    without it; the thread that ran it is left to finish and no longer counts as capacity."""

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(f"{what} took longer than {seconds:g} s and was given up")
        self.what = what
        self.seconds = seconds
