"""What the page downloads (standard library only; copied beside ``driver.py`` and run in the
user's sandbox). Chromium writes each download under a random name into ``downloads/.incoming``
of the workspace; a finished one within the caps is moved to ``downloads/<its name>``; one over
the size cap, or past the count cap, is cancelled and its file removed. The folder must be a
real directory inside the workspace (a symlink there is refused, so nothing lands elsewhere)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from typing import Any

INCOMING = ".incoming"


class DownloadRefused(Exception):
    pass


def safe_name(suggested: str) -> str:
    """A plain file name for ``suggested``: its last component, no leading dot, short."""
    name = re.sub(r"[^A-Za-z0-9._ -]", "_", os.path.basename(suggested.replace("\\", "/")))
    name = name.strip(" .")[:120]
    return name or "download"


def real_dir(path: str) -> str:
    """``path`` (relative to the workspace) as an existing directory that is no symlink."""
    here = os.path.realpath(".")
    made = os.path.realpath(path)
    if os.path.islink(path) or os.path.commonpath([here, made]) != here:
        raise DownloadRefused(f"{path} is not a folder of the workspace")
    os.makedirs(path, exist_ok=True)
    if os.path.islink(path) or not os.path.isdir(path):
        raise DownloadRefused(f"{path} is not a folder of the workspace")
    return os.path.abspath(path)


class Downloads:
    """Follows ``Browser.download*`` events; ``cancel(guid)`` is the browser's cancelDownload."""

    def __init__(self, folder: str, max_bytes: int, max_files: int,
                 cancel: Callable[[str], object], refused: list[str]) -> None:
        self.folder = real_dir(folder)
        self.incoming = real_dir(os.path.join(folder, INCOMING))
        self.max_bytes, self.max_files = max_bytes, max_files
        self.cancel, self.refused = cancel, refused
        self.active: dict[str, str] = {}  # guid -> suggested name
        # Every download whose file was removed (refused, cancelled, over the cap): Chromium
        # may still write or finish it after, so a later event for one removes it again, as
        # does the action's end.
        self.dropped: set[str] = set()
        self.kept: list[dict[str, Any]] = []
        self.seen = 0

    def kept_count(self) -> int:
        return sum(1 for e in os.scandir(self.folder) if e.is_file(follow_symlinks=False))

    def on_begin(self, p: dict[str, Any]) -> None:
        self.seen += 1
        name = safe_name(p.get("suggestedFilename") or "")
        if self.kept_count() + len(self.active) >= self.max_files:
            self._drop(p["guid"], f"{name}: the downloads folder already holds {self.max_files}")
            return
        self.active[p["guid"]] = name

    def on_progress(self, p: dict[str, Any]) -> None:
        guid = p["guid"]
        if guid in self.dropped:
            self._remove(guid)
            return
        if guid not in self.active:
            return
        size = max(p.get("totalBytes") or 0, p.get("receivedBytes") or 0)
        if size > self.max_bytes:
            name = self.active.pop(guid)
            self._drop(guid, f"{name}: larger than the {self.max_bytes}-byte cap; removed")
        elif p["state"] == "completed":
            self._keep(guid, self.active.pop(guid))
        elif p["state"] == "canceled":
            self.active.pop(guid)
            self._remove(guid)

    def _keep(self, guid: str, name: str) -> None:
        partial = os.path.join(self.incoming, guid)
        size = os.path.getsize(partial)
        if size > self.max_bytes:
            self._remove(guid)
            self.refused.append(f"download {name}: larger than the {self.max_bytes}-byte cap")
            return
        stem, ext = os.path.splitext(name)
        final, n = name, 1
        while os.path.lexists(os.path.join(self.folder, final)):
            n += 1
            final = f"{stem} ({n}){ext}"
        os.rename(partial, os.path.join(self.folder, final))
        self.kept.append({"name": final, "bytes": size})

    def _drop(self, guid: str, why: str) -> None:
        self.refused.append(f"download {why}")
        self.cancel(guid)
        self._remove(guid)

    def _remove(self, guid: str) -> None:
        self.dropped.add(guid)
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.incoming, guid))

    def stop_unfinished(self) -> None:
        """Cancel what is still running when the action ends, and remove its files."""
        for guid, name in list(self.active.items()):
            self._drop(guid, f"{name}: not finished within the action's time; removed")
        self.active.clear()
        for guid in self.dropped:
            self._remove(guid)
