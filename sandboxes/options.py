"""Settings for every sandbox backend; each backend reads only its own fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sandboxes.base import DEFAULT_OUTPUT_LIMIT

THIRTY_DAYS = 30 * 24 * 3600


@dataclass(frozen=True, kw_only=True)
class SandboxOptions:
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    """Characters (bytes for the local backend) of stdout and of stderr kept per command."""
    default_timeout: float = 60.0
    """Seconds a command may run when ``exec`` is called without a timeout."""

    kill_grace: float = 2.0
    """Local: seconds between SIGTERM and SIGKILL to a timed-out command's process group."""
    env_passthrough: tuple[str, ...] = ()
    """Local: extra parent variables handed to commands (secret-looking names never are)."""
    local_isolation: Literal["bwrap", "none"] = "none"
    """Local: "bwrap" runs each command in a bubblewrap container holding only its user's
    workspace; "none" runs plain subprocesses (one trusted user only)."""
    local_network: bool = True
    """Local, isolated: whether commands reach the network."""

    modal_app_name: str = "iris-sandboxes"
    modal_image: Any = None
    """A ``modal.Image``; None means Debian slim (Python) with git and curl."""
    modal_workdir: str = "/workspace"
    modal_timeout: int = 3600
    """Maximum lifetime of one Modal sandbox, in seconds."""
    modal_idle_timeout: int = 600
    modal_snapshot_ttl: int | None = THIRTY_DAYS
    """Seconds Modal keeps a hibernation snapshot; None keeps it indefinitely."""
    modal_snapshot_timeout: int = 600
    """Seconds a hibernation snapshot may take (Modal's own default, 55 s, is too short for a
    large workspace: the snapshot would fail and the sandbox later end with nothing saved)."""
    modal_terminate_wait: float = 60.0
    """Seconds to wait for a hibernated sandbox to be gone, so a resume never adopts it."""
    modal_exec_grace: float = 30.0
    """Seconds past a command's own timeout before Iris stops waiting for Modal to report its
    end (the backstop): the command is then killed and what it printed so far returned."""

    daytona_api_key: str | None = None
    """None lets the SDK read DAYTONA_API_KEY / DAYTONA_API_URL / DAYTONA_TARGET."""
    daytona_api_url: str | None = None
    daytona_target: str | None = None
    daytona_image: str | None = None
    """Create from this image; None creates from ``daytona_snapshot`` (None: Daytona's default)."""
    daytona_snapshot: str | None = None
    daytona_workdir: str | None = None
    """Workspace directory inside the sandbox; None uses the sandbox's working directory."""
    daytona_auto_stop_interval: int = 15
    """Minutes of inactivity before Daytona stops the sandbox (0 disables)."""
    daytona_auto_archive_interval: int = 7 * 24 * 60
    """Minutes a stopped sandbox waits before Daytona archives it."""
    daytona_wait_timeout: float = 120.0
    """Seconds to wait for Daytona to create, start or stop a sandbox."""
