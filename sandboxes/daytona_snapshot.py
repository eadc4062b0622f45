"""The Daytona snapshot the browser tools need: Daytona's default snapshot is not known to
ship Chromium, so ``iris daytona browser-snapshot`` builds one once per Daytona organisation
(Daytona's declarative builder: Debian slim with Python, git, curl, Chromium and fonts) and
Iris creates sandboxes from it when ``IRIS_DAYTONA_SNAPSHOT`` names it.

The build runs on Daytona's side and takes minutes; that is why it is a command run once and
not part of creating a user's sandbox (whose wait is bounded by ``daytona_wait_timeout``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sandboxes.base import SandboxError
from sandboxes.daytona_client import shared_client
from sandboxes.options import SandboxOptions

BROWSER_SNAPSHOT = "iris-browser-1"  # a new name whenever the image below changes
PACKAGES = ("git", "curl", "chromium", "fonts-liberation")
WORK_DIR = "/home/daytona"
FAILED = ("error", "build_failed")


def load_sdk() -> Any:
    import daytona

    return daytona


def browser_image(sdk: Any) -> Any:
    """The declarative image: Python 3.12 on Debian slim with Chromium for the browser tools."""
    return (
        sdk.Image.debian_slim("3.12")
        .run_commands(
            "apt-get update && apt-get install -y --no-install-recommends "
            + " ".join(PACKAGES) + " && rm -rf /var/lib/apt/lists/*",
            f"mkdir -p {WORK_DIR}",
        )
        .workdir(WORK_DIR)
    )


def _state(snapshot: Any) -> str:
    state = getattr(snapshot, "state", None)
    return str(getattr(state, "value", state) or "unknown")


def ensure_browser_snapshot(
    options: SandboxOptions, name: str = BROWSER_SNAPSHOT,
    log: Callable[[str], None] = print, sdk: Any = None,
) -> bool:
    """Build the snapshot ``name`` unless Daytona has it already; True when it was built now.
    A snapshot of that name whose build failed is reported, not replaced (delete it first)."""
    sdk = sdk or load_sdk()
    client = shared_client(sdk, options)
    try:
        found = client.snapshot.get(name)
    except sdk.DaytonaNotFoundError:
        found = None
    except sdk.DaytonaError as exc:
        raise SandboxError(f"could not ask Daytona for snapshot {name!r}: {exc}") from exc
    if found is not None:
        state = _state(found)
        if state in FAILED:
            reason = getattr(found, "error_reason", None) or "no reason given"
            raise SandboxError(
                f"Daytona's snapshot {name!r} is in state {state} ({reason}): delete it in "
                "Daytona's dashboard, then run this again"
            )
        log(f"Daytona already has snapshot {name!r} ({state}).")
        return False
    log(f"Building snapshot {name!r} on Daytona (Debian slim, Python 3.12, "
        f"{', '.join(PACKAGES)}); this takes a few minutes.")
    try:
        client.snapshot.create(
            sdk.CreateSnapshotParams(name=name, image=browser_image(sdk)), on_logs=log, timeout=0
        )
    except sdk.DaytonaError as exc:
        raise SandboxError(f"Daytona could not build snapshot {name!r}: {exc}") from exc
    return True
