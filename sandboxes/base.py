"""The sandbox contract shared by every backend, and the helpers they all use.

Timeouts: a command that outlives its timeout ends with ``exit_code == TIMEOUT_EXIT_CODE`` (-1)
and ``timed_out=True``, and keeps what it printed until then. A command killed by signal N
reports ``128 + N``, as a shell would. ``note`` says, in plain words, anything unusual about how
the command ended (a remote provider that never reported its end); it is empty otherwise.

Stopping: ``exec(..., stop=event)`` ends the command (killed where it runs) once ``event`` is
set, and returns what it printed until then with ``stopped=True`` and ``exit_code == -1``.
Cancelling ``exec`` kills the command too, but returns nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import re
import stat as stat_mode
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Protocol, TypeVar, overload

TIMEOUT_EXIT_CODE = -1
DEFAULT_OUTPUT_LIMIT = 50_000
DEFAULT_MAX_READ = 32 * 1024 * 1024
"""Bytes ``read_file`` returns at most unless the caller asks for less; a larger file is
refused before any of it is read (read it in windows with ``read_range``)."""

Status = Literal["running", "hibernated", "absent"]

_USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,58}")


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str
    truncated: bool
    duration: float
    timed_out: bool = False
    note: str = ""
    stopped: bool = False


@dataclass(frozen=True)
class DirEntry:
    name: str
    is_dir: bool
    size: int


FileKind = Literal["file", "dir", "link", "fifo", "socket", "device", "other"]


@dataclass(frozen=True)
class FileStat:
    """What a workspace path is, without following a symbolic link at its end."""

    kind: FileKind
    size: int


@dataclass(frozen=True)
class FileWindow:
    """Up to ``length`` bytes of a regular file from ``offset``, and the file's size then."""

    data: bytes
    offset: int
    size: int


class SandboxError(Exception):
    """A sandbox backend failed; the message says what and where."""


class Stopped(Exception):
    """The caller's stop event was set before the command ended."""


class PathOutsideWorkspace(SandboxError):
    """A path resolves outside the user's workspace."""


class SandboxFileNotFound(SandboxError, FileNotFoundError):
    """A file or directory asked for does not exist in the workspace."""


class LinkRefused(PathOutsideWorkspace):
    """A path goes through a symbolic link: file operations never follow one, so no link
    (or link swapped in while the operation runs) can lead out of the workspace."""


class NotARegularFile(SandboxError):
    """Only regular files are read: a directory, named pipe, socket or device is refused
    before anything is read from it."""


class FileTooLarge(SandboxError):
    """The file is larger than the caller's limit; nothing was read."""


class FilesBusy(SandboxError):
    """A file operation did not finish in time, or the user has too many running."""


def kind_of_mode(mode: int) -> FileKind:
    """The ``FileKind`` of an ``st_mode``."""
    st = stat_mode
    if st.S_ISREG(mode):
        return "file"
    if st.S_ISDIR(mode):
        return "dir"
    if st.S_ISLNK(mode):
        return "link"
    if st.S_ISFIFO(mode):
        return "fifo"
    if st.S_ISSOCK(mode):
        return "socket"
    if st.S_ISCHR(mode) or st.S_ISBLK(mode):
        return "device"
    return "other"


_KIND_WORDS = {"dir": "a directory", "link": "a symbolic link", "fifo": "a named pipe (FIFO)",
               "socket": "a socket", "device": "a device", "other": "not a regular file"}


def not_regular(shown: str, kind: FileKind) -> NotARegularFile:
    """The error for reading ``shown``, which is of ``kind`` (anything but "file")."""
    return NotARegularFile(f"{shown!r} is {_KIND_WORDS.get(kind, 'not a regular file')}; "
                           "only regular files can be read")


def too_large(shown: str, size: int, limit: int) -> FileTooLarge:
    return FileTooLarge(f"{shown!r} is {size} bytes, more than the {limit} bytes that can be "
                        "read at once; read it in parts (offset and limit)")


class WorkspaceLost(SandboxError):
    """The user's saved workspace no longer exists at the provider (its snapshot expired, or
    its sandbox was deleted or broke beyond recovery); a new, empty one was started instead.

    Raised once, before the operation ran: the operation did not happen and may be retried.
    ``reason`` says in plain words why the old workspace could not be brought back.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


COMMAND_HOME = "/tmp/iris-home"
"""HOME for commands in a remote sandbox: outside the workspace, so no file the agent writes
there (``.bash_profile``, ``.gitconfig``, ``.profile``) is read by the shell or by git."""


RUN_MARKER = "IRIS_RUN_ID"
"""Set in a remote command's environment (its children inherit it), so the command can be
stopped by marker: Modal gives no process id, and Daytona's session delete signals only the
session's process group, which GNU ``timeout`` leaves."""


KILL_TIMEOUT = 10
"""Seconds the kill-by-marker command may take."""


def new_run_id() -> str:
    """The value of ``RUN_MARKER`` for one remote command."""
    return uuid.uuid4().hex


def backstop_note(provider: str) -> str:
    """The note of a command whose end ``provider`` never reported in time (it was killed)."""
    return (f"{provider} did not report the command's end in time: it was stopped; the output "
            "is what it printed until then")


def kill_argv(run_id: str) -> list[str]:
    """A command that SIGKILLs every process whose environment carries ``run_id``'s marker
    (a process that cleared its environment is not found)."""
    marker = f"{RUN_MARKER}={run_id}"
    script = (
        '{ for p in /proc/[0-9]*; do '
        f'if tr "\\0" "\\n" < "$p/environ" | grep -qx "{marker}"; then kill -9 "${{p#/proc/}}"; '
        'fi; done; } 2>/dev/null; true'
    )
    return ["bash", "--noprofile", "--norc", "-c", script]


_T = TypeVar("_T")


async def within(awaitable: Awaitable[_T], timeout: float, stop: asyncio.Event | None) -> _T:
    """``awaitable``'s result, or ``TimeoutError`` after ``timeout`` seconds, or ``Stopped``
    once ``stop`` is set; in both of those it is cancelled (shield what must not be)."""
    if stop is None:
        return await asyncio.wait_for(awaitable, timeout)
    work = asyncio.ensure_future(awaitable)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({work, stopper}, timeout=timeout,
                           return_when=asyncio.FIRST_COMPLETED)
        if work.done():
            return work.result()
        raise Stopped() if stop.is_set() else TimeoutError()
    finally:
        stopper.cancel()
        if not work.done():
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await work


def shell_argv(command: str) -> list[str]:
    """``command`` as bash runs it in a remote sandbox: no login profile, no rc file, and
    HOME (see ``COMMAND_HOME``) created first so programs that write there work."""
    return ["bash", "--noprofile", "--norc", "-c", f'mkdir -p "$HOME" 2>/dev/null; {command}']


class Sandbox(Protocol):
    user_id: str

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
        stop: asyncio.Event | None = None,
    ) -> ExecResult: ...

    async def read_file(self, path: str, max_bytes: int = DEFAULT_MAX_READ) -> bytes:
        """The whole regular file; ``FileTooLarge`` (nothing read) past ``max_bytes``,
        ``NotARegularFile`` for a directory, pipe, socket or device."""
        ...

    async def read_range(self, path: str, offset: int, length: int) -> FileWindow:
        """At most ``length`` bytes of a regular file from byte ``offset`` (fewer only at
        its end), and its size; never reads more of it than that."""
        ...

    async def stat(self, path: str) -> FileStat:
        """What ``path`` is and its size; a symbolic link at its end is not followed."""
        ...

    async def write_file(self, path: str, data: bytes) -> None: ...

    async def list_dir(self, path: str = ".") -> list[DirEntry]: ...

    async def hibernate(self) -> None: ...

    async def resume(self) -> None: ...

    async def status(self) -> Status: ...


class SandboxStateStore(Protocol):
    def get_sandbox_state(self, user_id: str, backend: str) -> dict[str, str] | None: ...

    def put_sandbox_state(self, user_id: str, backend: str, state: dict[str, str]) -> None: ...


def validate_user_id(user_id: str) -> str:
    """Return ``user_id`` if it is safe as a directory name and a sandbox name, else raise."""
    if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
        raise ValueError(
            f"invalid user id for a sandbox: {user_id!r} (1-59 characters: letters, digits, "
            "'_', '.', '-'; starting with a letter or digit)"
        )
    return user_id


def _omitted_marker(count: int, unit: str) -> str:
    return f"\n[... {count} {unit} omitted ...]\n"


def cap_output(text: str, limit: int = DEFAULT_OUTPUT_LIMIT) -> tuple[str, bool]:
    """Keep the first and last ``limit // 2`` characters of ``text`` around an omission marker.

    Returns the text and whether anything was cut. The marker is not counted in ``limit``.
    """
    if len(text) <= limit:
        return text, False
    head = limit // 2
    tail = limit - head
    kept_tail = text[len(text) - tail :] if tail else ""
    return text[:head] + _omitted_marker(len(text) - limit, "characters") + kept_tail, True


def join_capped(head: bytes, omitted: int, tail: bytes) -> str:
    """Decode a head/tail byte capture into text, marking how many bytes were dropped between."""
    text = head.decode("utf-8", errors="replace")
    if omitted:
        text += _omitted_marker(omitted, "bytes")
    return text + tail.decode("utf-8", errors="replace")


@overload
def resolve_in_workspace(root: Path, path: str) -> Path: ...
@overload
def resolve_in_workspace(root: PurePosixPath, path: str) -> PurePosixPath: ...
def resolve_in_workspace(root: PurePosixPath | Path, path: str) -> PurePosixPath | Path:
    """Resolve ``path`` (relative to ``root``, or absolute) to a location inside ``root``.

    A concrete ``Path`` root is a local directory: symlinks are followed, so a link pointing
    out of the workspace is refused like ``..`` is. A ``PurePosixPath`` root names a directory
    inside a remote sandbox and is normalised lexically.
    """
    if "\x00" in path:
        raise PathOutsideWorkspace(f"path contains a NUL byte: {path!r}")
    base: PurePosixPath | Path
    target: PurePosixPath | Path
    if isinstance(root, Path):
        base = root.resolve()
        target = (base / path).resolve()
        inside = target == base or base in target.parents
    else:
        base = PurePosixPath(posixpath.normpath(str(root)))
        target = PurePosixPath(posixpath.normpath(posixpath.join(str(base), path)))
        inside = target == base or base in target.parents
    if not inside:
        raise PathOutsideWorkspace(f"path {path!r} is outside the workspace {str(base)!r}")
    return target


class HandleCache:
    """Holds a remote sandbox handle and forgets it after ``max_idle`` seconds without use.

    A forgotten handle is looked up again, so a sandbox the provider stopped or ended while
    this object sat idle is noticed and woken instead of failing the next call.
    """

    def __init__(self, max_idle: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._max_idle = max_idle
        self._clock = clock
        self._value: Any = None
        self._used = 0.0

    def get(self) -> Any:
        now = self._clock()
        if self._value is not None and now - self._used > self._max_idle:
            self._value = None
        self._used = now
        return self._value

    def set(self, value: Any) -> None:
        self._value = value
        self._used = self._clock()
