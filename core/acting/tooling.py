"""Shared by the workspace tools: reaching the user's sandbox and turning its errors into
messages the model can act on."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from core.errors import ToolRetry

if TYPE_CHECKING:
    from core.contracts.services import WorkspaceService
    from core.contracts.toolkit import ToolContext


def workspaces(ctx: ToolContext) -> WorkspaceService:
    return ctx.services.workspaces


def lock_key(path: str) -> str:
    return posixpath.normpath(path.strip() or ".")


@contextmanager
def sandbox_errors() -> Iterator[None]:
    """Sandbox failures (a path outside the workspace, a missing file, a backend that is
    down) become a ``ToolRetry`` whose message goes back to the model."""
    from sandboxes import PathOutsideWorkspace, SandboxError, SandboxFileNotFound

    try:
        yield
    except PathOutsideWorkspace as exc:
        raise ToolRetry(
            f"refused: {exc}. Use a path inside the workspace (relative paths start there)."
        ) from None
    except SandboxFileNotFound as exc:
        raise ToolRetry(str(exc)) from None
    except SandboxError as exc:
        raise ToolRetry(str(exc)) from None
