"""Subprocess sandbox in ``<home>/workspaces/<user_id>``, the emulator's default.

With ``isolation="bwrap"`` every command runs in a bubblewrap container that holds only its
user's workspace (``sandboxes.isolation``): a boundary between users, and between a user and
Iris' own state. With ``isolation="none"`` commands run as plain subprocesses: their
environment is built from scratch and HOME is outside the workspace, but a command can still
``cd /`` and read whatever the host user can (fit for one trusted user only).

Commands run without login profiles or rc files (``bash --noprofile --norc -c``), so a
``.bash_profile`` or ``.bashrc`` written into the workspace is never executed by Iris.
Isolated commands take their background processes with them when they end; unisolated ones
leave them running (only a timeout kills the process group).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import time
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path, PurePath, PurePosixPath
from typing import TypeVar

from sandboxes.base import (
    DEFAULT_MAX_READ,
    TIMEOUT_EXIT_CODE,
    DirEntry,
    ExecResult,
    FileStat,
    FileWindow,
    SandboxError,
    SandboxStateStore,
    Status,
    Stopped,
    join_capped,
    resolve_in_workspace,
    validate_user_id,
    within,
)
from sandboxes.file_pool import FilePool, shared_pool
from sandboxes.isolation import HOME, bwrap_argv, bwrap_path
from sandboxes.options import SandboxOptions
from sandboxes.workspace_fs import WorkspaceFiles

T = TypeVar("T")

_SECRET_NAME = re.compile(
    r"^IRIS_|^AWS_|_KEY$|_TOKEN$|_SECRET$|PASSWORD|SECRET|CREDENTIAL", re.IGNORECASE
)
_PIPE_DRAIN_GRACE = 0.2
CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def looks_secret(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def command_env(
    home: PurePath,
    caller_env: Mapping[str, str] | None,
    parent: Mapping[str, str],
    passthrough: tuple[str, ...] = (),
) -> dict[str, str]:
    """Build a command's environment from scratch; the parent contributes only safe names.
    ``home`` is the command's HOME, never inside the workspace."""
    env = {
        "PATH": parent.get("PATH") or os.defpath,
        "HOME": str(home),
        "LANG": parent.get("LANG") or "C.UTF-8",
        "TERM": "dumb",
    }
    for name in passthrough:
        if name in parent and not looks_secret(name):
            env[name] = parent[name]
    env.update(caller_env or {})
    return env


@cache
def _shell() -> tuple[str, ...]:
    bash = shutil.which("bash")
    return (bash, "--noprofile", "--norc", "-c") if bash else ("/bin/sh", "-c")


class _HeadTail:
    """Keeps the first and last bytes of a stream and counts what falls in between."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.omitted = 0

    def feed(self, data: bytes) -> None:
        room = self._head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        excess = len(self.tail) - self._tail_limit
        if excess > 0:
            del self.tail[:excess]
            self.omitted += excess

    def text(self) -> str:
        return join_capped(bytes(self.head), self.omitted, bytes(self.tail))


class _Capture(asyncio.SubprocessProtocol):
    def __init__(self, limit: int) -> None:
        loop = asyncio.get_running_loop()
        self.streams = {1: _HeadTail(limit), 2: _HeadTail(limit)}
        self.exited: asyncio.Future[None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self._open = {1, 2}

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.streams[fd].feed(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._open.discard(fd)
        if not self._open and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class LocalSandbox:
    """status: always "running"; hibernate and resume keep the workspace and do nothing else."""

    backend = "local"

    def __init__(
        self,
        user_id: str,
        *,
        home: Path,
        state: SandboxStateStore | None = None,
        options: SandboxOptions | None = None,
        pool: FilePool | None = None,
    ) -> None:
        self.user_id = validate_user_id(user_id)
        self._options = options or SandboxOptions()
        self.workspace = Path(home) / "workspaces" / self.user_id
        self.workspace.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.isolation = self._options.local_isolation
        self._bwrap = bwrap_path() if self.isolation == "bwrap" else None
        if self.isolation == "bwrap" and self._bwrap is None:
            raise SandboxError("sandbox isolation needs bubblewrap (bwrap), which is not "
                               "installed: apt-get install bubblewrap")
        # Unisolated commands get a HOME of their own beside the workspaces, not inside one.
        self.command_home = Path(home) / "sandbox-homes" / self.user_id
        self.files = WorkspaceFiles(self.workspace)
        self._pool = pool or shared_pool()

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
        stop: asyncio.Event | None = None,
    ) -> ExecResult:
        timeout = self._options.default_timeout if timeout is None else timeout
        workdir = resolve_in_workspace(self.workspace, cwd or ".")
        if not workdir.is_dir():
            raise SandboxError(f"working directory {cwd!r} is not a directory in the workspace")
        loop = asyncio.get_running_loop()
        capture = _Capture(self._options.output_limit)
        started = time.monotonic()
        argv, process_env = self._argv(command, workdir, env)
        transport, _ = await loop.subprocess_exec(
            lambda: capture,
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=workdir,
            env=process_env,
            start_new_session=True,
        )
        pgid = transport.get_pid()
        timed_out = stopped = False
        try:
            try:
                await within(asyncio.shield(capture.exited), timeout, stop)
            except (TimeoutError, Stopped) as ended:
                timed_out, stopped = isinstance(ended, TimeoutError), isinstance(ended, Stopped)
                await self._kill_group(pgid, capture.exited)
            await asyncio.wait([capture.pipes_closed], timeout=_PIPE_DRAIN_GRACE)
        finally:
            if not capture.exited.done():
                _signal_group(pgid, signal.SIGKILL)
            transport.close()
        duration = time.monotonic() - started
        returncode = transport.get_returncode()
        if timed_out or stopped or returncode is None:
            exit_code = TIMEOUT_EXIT_CODE
        else:
            exit_code = returncode if returncode >= 0 else 128 - returncode
        out, err = capture.streams[1], capture.streams[2]
        return ExecResult(
            exit_code=exit_code,
            stdout=out.text(),
            stderr=err.text(),
            truncated=bool(out.omitted or err.omitted),
            duration=duration,
            timed_out=timed_out,
            stopped=stopped,
        )

    def _argv(self, command: str, workdir: Path, env: dict[str, str] | None
              ) -> tuple[list[str], dict[str, str]]:
        """The command line and the environment of the process Iris starts for ``command``."""
        passthrough = self._options.env_passthrough
        if self._bwrap is None:
            self.command_home.mkdir(parents=True, exist_ok=True, mode=0o700)
            return [*_shell(), command], command_env(self.command_home, env, os.environ,
                                                      passthrough)
        inside = command_env(HOME, env, os.environ, passthrough)
        inside["PATH"] = CONTAINER_PATH
        inside.pop("HOME")
        relative = PurePosixPath(workdir.relative_to(self.workspace.resolve()).as_posix())
        argv = bwrap_argv(self._bwrap, self.workspace, relative, inside,
                          network=self._options.local_network)
        # bwrap itself starts with nothing of Iris' environment either: /proc/1/environ
        # inside the container is bwrap's.
        return [*argv, "bash", "--noprofile", "--norc", "-c", command], {"PATH": CONTAINER_PATH}

    async def _kill_group(self, pgid: int, exited: asyncio.Future[None]) -> None:
        _signal_group(pgid, signal.SIGTERM)
        await asyncio.wait([exited], timeout=self._options.kill_grace)
        _signal_group(pgid, signal.SIGKILL)
        await asyncio.wait([exited], timeout=self._options.kill_grace)

    async def read_file(self, path: str, max_bytes: int = DEFAULT_MAX_READ) -> bytes:
        return await self._files_op(f"reading {path!r}", self.files.read, path, max_bytes)

    async def read_range(self, path: str, offset: int, length: int) -> FileWindow:
        return await self._files_op(f"reading {path!r}", self.files.read_range, path, offset,
                                    length)

    async def stat(self, path: str) -> FileStat:
        return await self._files_op(f"looking at {path!r}", self.files.stat, path)

    async def write_file(self, path: str, data: bytes) -> None:
        await self._files_op(f"writing {path!r}", self.files.write, path, data)

    async def list_dir(self, path: str = ".") -> list[DirEntry]:
        return await self._files_op(f"listing {path!r}", self.files.listing, path)

    async def delete(self, path: str) -> None:
        await self._files_op(f"deleting {path!r}", self.files.delete, path)

    async def _files_op(self, what: str, fn: Callable[..., T], *args: object) -> T:
        return await self._pool.run(self.user_id, what, fn, *args)

    async def hibernate(self) -> None:
        return None

    async def resume(self) -> None:
        self.workspace.mkdir(parents=True, exist_ok=True, mode=0o700)

    async def status(self) -> Status:
        return "running"

