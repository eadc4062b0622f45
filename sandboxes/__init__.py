"""Per-user workspaces where the agent runs commands and edits files.

Importing this package is cheap: the Modal and Daytona SDKs load only when such a sandbox
is opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from sandboxes.base import (
    DEFAULT_MAX_READ,
    TIMEOUT_EXIT_CODE,
    DirEntry,
    ExecResult,
    FilesBusy,
    FileStat,
    FileTooLarge,
    FileWindow,
    LinkRefused,
    NotARegularFile,
    PathOutsideWorkspace,
    Sandbox,
    SandboxError,
    SandboxFileNotFound,
    SandboxStateStore,
    Status,
    WorkspaceLost,
    cap_output,
    resolve_in_workspace,
    validate_user_id,
)
from sandboxes.options import SandboxOptions

Backend = Literal["local", "modal", "daytona"]

__all__ = [
    "DEFAULT_MAX_READ",
    "TIMEOUT_EXIT_CODE",
    "Backend",
    "DirEntry",
    "ExecResult",
    "FileStat",
    "FileTooLarge",
    "FileWindow",
    "FilesBusy",
    "LinkRefused",
    "NotARegularFile",
    "PathOutsideWorkspace",
    "Sandbox",
    "SandboxError",
    "SandboxFileNotFound",
    "SandboxOptions",
    "SandboxStateStore",
    "Status",
    "WorkspaceLost",
    "cap_output",
    "open_sandbox",
    "resolve_in_workspace",
    "validate_user_id",
]


def open_sandbox(
    backend: Backend,
    user_id: str,
    *,
    home: Path,
    state: SandboxStateStore,
    options: SandboxOptions | None = None,
) -> Sandbox:
    """Return the sandbox of ``user_id`` on ``backend``; nothing is started until first use.

    Example: ``await open_sandbox("local", "u1", home=home, state=store).exec("ls")``
    """
    options = options or SandboxOptions()
    if backend == "local":
        from sandboxes.local import LocalSandbox

        return LocalSandbox(user_id, home=home, state=state, options=options)
    if backend == "modal":
        from sandboxes.modal_backend import ModalSandbox

        return ModalSandbox(user_id, state=state, options=options)
    if backend == "daytona":
        from sandboxes.daytona_backend import DaytonaSandbox

        return DaytonaSandbox(user_id, state=state, options=options)
    raise ValueError(f"unknown sandbox backend {backend!r}: expected local, modal or daytona")
