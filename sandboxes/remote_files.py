"""``stat`` and windowed reads for remote sandboxes (Modal, Daytona), as small shell commands
run in the sandbox itself: the kind and size of a path are known before anything is read,
and a window of a large file is read with ``tail -c`` / ``head -c`` (both seek in a regular
file), base64-encoded so any bytes survive the command's text output.

A remote sandbox is its own machine, so a link there cannot reach Iris' host; a link at the
end of a path is still reported as a link and never read through, as locally.
"""

from __future__ import annotations

import base64
import posixpath
import shlex
from pathlib import PurePosixPath
from typing import Protocol

from sandboxes.base import (
    ExecResult,
    FileKind,
    FileStat,
    FileWindow,
    SandboxError,
    SandboxFileNotFound,
    not_regular,
    too_large,
)

REMOTE_FILE_TIMEOUT = 60.0
_MAX_WINDOW = 1 << 20
_KINDS: frozenset[str] = frozenset({"file", "dir", "link", "fifo", "socket", "device", "other"})


class _Execs(Protocol):
    async def exec(self, command: str, cwd: str | None = None, timeout: float | None = None,
                   env: dict[str, str] | None = None) -> ExecResult: ...


def relative_target(root: PurePosixPath, resolved: PurePosixPath) -> str:
    """A checked path as the workspace-relative ``./…`` a command (run in the workspace)
    is given."""
    return "./" + posixpath.relpath(str(resolved), str(root))


def _kind_script(target: str) -> str:
    """Shell that prints ``<kind> <size>`` of ``target`` (``missing 0`` when absent)."""
    return (
        f'p={shlex.quote(target)}; '
        'if [ -L "$p" ]; then k=link; elif [ -f "$p" ]; then k=file; elif [ -d "$p" ]; '
        'then k=dir; elif [ -p "$p" ]; then k=fifo; elif [ -S "$p" ]; then k=socket; '
        'elif [ -b "$p" ] || [ -c "$p" ]; then k=device; elif [ -e "$p" ]; then k=other; '
        'else k=missing; fi; '
        'if [ "$k" = missing ]; then s=0; else s=$(stat -c %s -- "$p" 2>/dev/null || echo 0); fi; '
        'echo "$k $s"'
    )


def _parse_kind(result: ExecResult, shown: str) -> tuple[FileKind, int, str]:
    head, _, rest = result.stdout.partition("\n")
    words = head.split()
    if result.exit_code != 0 or len(words) != 2 or not words[1].isdigit():
        raise SandboxError(f"could not look at {shown!r} in the sandbox: "
                           f"{(result.stderr or result.stdout).strip()[:200] or 'no answer'}")
    if words[0] == "missing":
        raise SandboxFileNotFound(f"no such file in the workspace: {shown!r}")
    kind: FileKind = words[0] if words[0] in _KINDS else "other"  # type: ignore[assignment]
    return kind, int(words[1]), rest


async def remote_stat(box: _Execs, target: str, shown: str) -> FileStat:
    result = await box.exec(_kind_script(target), timeout=REMOTE_FILE_TIMEOUT)
    kind, size, _ = _parse_kind(result, shown)
    return FileStat(kind=kind, size=size)


async def check_readable(box: _Execs, target: str, shown: str, max_bytes: int) -> None:
    """Refuse, before reading, anything but a regular file within ``max_bytes``."""
    found = await remote_stat(box, target, shown)
    if found.kind != "file":
        raise not_regular(shown, found.kind)
    if found.size > max_bytes:
        raise too_large(shown, found.size, max_bytes)


def window_bytes(output_limit: int) -> int:
    """Bytes per command, so their base64 text stays within the command's output limit."""
    return max(3, min(_MAX_WINDOW, (output_limit - 64) // 4 * 3))


async def remote_range(box: _Execs, target: str, shown: str, offset: int, length: int,
                       output_limit: int) -> FileWindow:
    if offset < 0 or length < 0:
        raise SandboxError("offset and length must not be negative")
    step = window_bytes(output_limit)
    chunks: list[bytes] = []
    got, size = 0, 0
    while True:
        want = min(step, length - got)
        read = (f'if [ "$k" = file ]; then tail -c +{offset + got + 1} -- "$p" | '
                f"head -c {want} | base64 | tr -d '\\n'; fi")
        result = await box.exec(f"{_kind_script(target)}; {read}", timeout=REMOTE_FILE_TIMEOUT)
        kind, size, encoded = _parse_kind(result, shown)
        if kind != "file":
            raise not_regular(shown, kind)
        if result.truncated:
            raise SandboxError(f"could not read {shown!r}: the sandbox's answer was cut")
        chunk = base64.b64decode(encoded.strip())
        chunks.append(chunk)
        got += len(chunk)
        if got >= length or len(chunk) < want:
            return FileWindow(data=b"".join(chunks), offset=offset, size=size)
