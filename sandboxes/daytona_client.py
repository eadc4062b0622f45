"""The Daytona client Iris shares per process, the sandbox states Daytona reports, and what its
errors mean (``sandboxes.daytona_backend`` uses them; ``sandboxes.daytona_snapshot`` builds
the browser snapshot with the same client)."""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

from sandboxes.base import SandboxError
from sandboxes.options import SandboxOptions

BACKEND = "daytona"
USER_LABEL = "iris-user"
HANDLE_MAX_IDLE = 60.0
DEFAULT_API_URL = "https://app.daytona.io/api"
DAEMON = "DAYTONA_DAEMON"

STARTED = "started"
_WAKE = frozenset({"stopped", "archived", "paused"})
_STARTING = frozenset({
    "creating", "restoring", "starting", "pending_build", "building_snapshot",
    "pulling_snapshot", "resuming",
})
_SETTLING = frozenset({
    "stopping", "archiving", "pausing", "resizing", "snapshotting", "forking", "unknown",
    "unknown_default_open_api",
})
_GONE = frozenset({"destroyed", "destroying"})
_HIBERNATED = _WAKE | frozenset({"stopping", "archiving", "pausing"})

_clients: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary()
)
_clients_lock = threading.Lock()


def api_url(options: SandboxOptions) -> str:
    """The API address, resolved here as the SDK would: passing ``api_url=None`` makes the SDK
    read its deprecated ``server_url`` field, which warns."""
    return options.daytona_api_url or os.environ.get("DAYTONA_API_URL") or DEFAULT_API_URL


def shared_client(sdk: Any, options: SandboxOptions) -> Any:
    """The process's one ``Daytona`` client for this configuration, built on first use."""
    key = (options.daytona_api_key, api_url(options), options.daytona_target)
    with _clients_lock:
        per_sdk = _clients.setdefault(sdk, {})
        client = per_sdk.get(key)
        if client is None:
            config = sdk.DaytonaConfig(
                api_key=options.daytona_api_key, api_url=key[1], target=options.daytona_target
            )
            try:
                client = sdk.Daytona(config)
            except sdk.DaytonaError as exc:
                raise SandboxError(f"cannot configure the Daytona client: {exc}") from exc
            per_sdk[key] = client
        return client


def _state_name(sandbox: Any) -> str:
    state = sandbox.state
    return str(getattr(state, "value", state) or "unknown")


def _broken(sandbox: Any) -> bool:
    return _state_name(sandbox) == "error" and not getattr(sandbox, "recoverable", False)


def _usable(sandbox: Any) -> bool:
    state = _state_name(sandbox)
    return state not in _GONE and state != "build_failed" and not _broken(sandbox)


def file_level(sdk: Any, exc: BaseException) -> bool:
    """A missing file or one the daemon inside the sandbox refused: the file's error, not the
    sandbox's."""
    return isinstance(exc, sdk.DaytonaFileNotFoundError) or (
        isinstance(exc, sdk.DaytonaNotFoundError) and exc.source == DAEMON
    )


def transient(sdk: Any, exc: BaseException) -> bool:
    """A connection error, or a 5xx answer. Only the SDK's ``DaytonaError`` carries a
    ``status_code`` (``None`` for client-side errors); any other exception is not."""
    if isinstance(exc, sdk.DaytonaConnectionError):
        return True
    return isinstance(exc, sdk.DaytonaError) and (exc.status_code or 0) >= 500


def describe(sdk: Any, exc: BaseException) -> str:
    """What a Daytona error means, for the sentence a user reads."""
    if isinstance(exc, sdk.DaytonaRateLimitError):
        kind = "Daytona's rate limit or quota was reached; try again in a few minutes"
    elif isinstance(exc, sdk.DaytonaTimeoutError):
        kind = "Daytona timed out; try again shortly"
    elif transient(sdk, exc):
        kind = "Daytona could not be reached; try again shortly"
    elif isinstance(exc, sdk.DaytonaNotFoundError):
        kind = "the sandbox was not found"
    else:
        kind = "Daytona reported an error"
    return f"{kind} ({type(exc).__name__}: {exc})"
