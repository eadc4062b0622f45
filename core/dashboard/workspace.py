"""Paths the workspace page may ask the sandbox for: relative, inside the workspace, no
parent steps. (The sandbox checks again: a path resolving outside it is refused there.)"""

from __future__ import annotations

from posixpath import normpath

from core.errors import IrisUsageError

MAX_PATH = 1024
MAX_DOWNLOAD_BYTES = 25 * 1024 * 1024


def checked_path(raw: str | None) -> str:
    """``""`` for the workspace root, else a clean relative path; IrisUsageError otherwise."""
    text = (raw or "").strip()
    if not text or text in (".", "/"):
        return "."
    if len(text) > MAX_PATH or "\x00" in text or "\\" in text:
        raise IrisUsageError("not a workspace path")
    if text.startswith("/") or ".." in text.split("/"):
        raise IrisUsageError("only paths inside the workspace can be opened")
    return normpath(text)


def crumbs(path: str) -> list[tuple[str, str]]:
    """(name, path) for each folder from the root down to ``path``."""
    out = [("workspace", ".")]
    if path == ".":
        return out
    parts = path.split("/")
    out += [(part, "/".join(parts[: i + 1])) for i, part in enumerate(parts)]
    return out


def parent_and_name(path: str) -> tuple[str, str]:
    head, _, name = path.rpartition("/")
    return head or ".", name
