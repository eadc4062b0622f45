"""One Daytona sandbox per user, labelled ``iris-user=<user_id>``; Daytona keeps its disk.

Commands run as ``bash --noprofile --norc -c <command>`` (HOME outside the workspace) as an
asynchronous command in a session of their own (``sandboxes.daytona_exec``): stdout and stderr
come back separately, and a command that outlives its timeout keeps what it printed.

Daytona states, and what a call does with each: ``started`` is used; ``stopped``, ``archived``
and ``paused`` are started; transitional states (creating, starting, restoring, stopping,
archiving, …) are waited for until they settle; ``error`` is recovered with ``recover()`` when
Daytona says it is recoverable; ``build_failed`` (never ran, holds no files) is deleted and
created again. A sandbox that is destroyed, gone, or in an unrecoverable error is replaced by a
new one and ``WorkspaceLost`` tells the caller once; the broken one is left for the operator.

The sandbox id is kept in the state store, so a label lookup that misses it never starts an
empty workspace while the old one still exists.

status: "running" for started and starting states, "hibernated" for stopped, archived,
paused, stopping, archiving and recoverable error states, "absent" otherwise.

One synchronous ``Daytona`` client per process and configuration
(``sandboxes.daytona_client.shared_client``): each holds an event stream with a background
thread and an HTTP pool. It runs in worker threads and binds to no event loop, so one sandbox
object survives across ``asyncio.run`` calls.
"""

from __future__ import annotations

import asyncio
import functools
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import PurePosixPath
from typing import Any, TypeVar

from sandboxes import daytona_exec
from sandboxes.base import (
    DEFAULT_MAX_READ,
    TIMEOUT_EXIT_CODE,
    DirEntry,
    ExecResult,
    FileStat,
    FileWindow,
    HandleCache,
    SandboxError,
    SandboxFileNotFound,
    SandboxStateStore,
    Status,
    Stopped,
    WorkspaceLost,
    cap_output,
    new_run_id,
    resolve_in_workspace,
    validate_user_id,
)
from sandboxes.daytona_client import (
    _GONE,
    _HIBERNATED,
    _SETTLING,
    _STARTING,
    _WAKE,
    BACKEND,
    DAEMON,
    HANDLE_MAX_IDLE,
    STARTED,
    USER_LABEL,
    _broken,
    _state_name,
    _usable,
    describe,
    file_level,
    shared_client,
    transient,
)
from sandboxes.options import SandboxOptions
from sandboxes.remote_files import check_readable, relative_target, remote_range, remote_stat

T = TypeVar("T")

class DaytonaSandbox:
    backend = BACKEND

    def __init__(
        self,
        user_id: str,
        *,
        state: SandboxStateStore | None = None,
        options: SandboxOptions | None = None,
        sdk: Any = None,
        clock: Callable[[], float] = time.monotonic,
        pause: Callable[[float], None] = time.sleep,
    ) -> None:
        """``sdk`` is the ``daytona`` module, or an object offering the same attributes.
        ``pause`` waits between looks at a sandbox that is changing state (tests pass one
        that moves their clock)."""
        self.user_id = validate_user_id(user_id)
        self._state = state
        self._options = options or SandboxOptions()
        if sdk is None:
            import daytona as sdk
        self._sdk = sdk
        self._clock = clock
        self._pause = pause
        self._handle = HandleCache(HANDLE_MAX_IDLE, clock)
        self._root: PurePosixPath | None = None

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
        stop: asyncio.Event | None = None,
    ) -> ExecResult:
        """Run ``command`` in a session of its own (``sandboxes.daytona_exec``), so a command
        that outlives ``timeout`` still returns what it printed."""
        timeout = self._options.default_timeout if timeout is None else timeout
        seconds = max(1, math.ceil(timeout))
        started = time.monotonic()

        halt = threading.Event()

        def stopped() -> bool:  # read in worker threads: a flag, no loop call
            return halt.is_set() or (stop is not None and stop.is_set())

        def begin(sandbox: Any, root: PurePosixPath) -> tuple[Any, daytona_exec.Started]:
            workdir = resolve_in_workspace(root, cwd or ".")
            run_id = new_run_id()
            line = daytona_exec.command_line(command, PurePosixPath(workdir), env or {},
                                             seconds, run_id)
            return sandbox, daytona_exec.start(self._sdk, sandbox, line, run_id, stopped)

        asked = asyncio.ensure_future(stop.wait()) if stop is not None else None
        if asked is not None:
            asked.add_done_callback(lambda _: halt.set())  # the worker ends the command
        try:
            sandbox, run = await self._call("run the command", begin, idempotent=False)
        except BaseException as exc:
            if asked is not None:
                asked.cancel()
            if not isinstance(exc, Stopped):
                raise
            # the stop came while the command was starting (a sandbox woken, its session
            # opened): it was never started
            return ExecResult(exit_code=TIMEOUT_EXIT_CODE, stdout="", stderr="",
                              truncated=False, duration=time.monotonic() - started,
                              stopped=True)
        try:
            done = await asyncio.to_thread(
                daytona_exec.finish, self._sdk, sandbox, run, seconds,
                functools.partial(transient, self._sdk), halt
            )
        except asyncio.CancelledError:
            halt.set()  # the worker thread kills the command and deletes its session
            raise
        except self._sdk.DaytonaError as exc:
            self._handle.set(None)
            raise SandboxError(
                f"the command was cut off: {describe(self._sdk, exc)}. It may have run in part; "
                "check its effects before running it again. Your files are kept in the sandbox."
            ) from exc
        finally:
            if asked is not None:
                asked.cancel()
        exit_code = done.exit_code
        if done.timed_out or exit_code is None:
            exit_code = TIMEOUT_EXIT_CODE
        limit = self._options.output_limit
        stdout, cut_out = cap_output(done.stdout, limit)
        stderr, cut_err = cap_output(done.stderr, limit)
        return ExecResult(
            exit_code=exit_code,
            stdout=stdout,
            stderr=stderr,
            truncated=cut_out or cut_err,
            duration=time.monotonic() - started,
            timed_out=done.timed_out,
            note=done.note,
            stopped=done.stopped,
        )

    async def read_file(self, path: str, max_bytes: int = DEFAULT_MAX_READ) -> bytes:
        await check_readable(self, await self._target(path), path, max_bytes)

        def read(sandbox: Any, root: PurePosixPath) -> bytes:
            return sandbox.fs.download_file(str(resolve_in_workspace(root, path)))

        with self._file_errors(path):
            data = await self._call(f"read {path!r}", read)
        return bytes(data or b"")

    async def read_range(self, path: str, offset: int, length: int) -> FileWindow:
        return await remote_range(self, await self._target(path), path, offset, length,
                                  self._options.output_limit)

    async def _target(self, path: str) -> str:
        """``path`` in the sandbox, checked to be inside its workspace."""
        _, root = await self._running()
        return relative_target(root, PurePosixPath(resolve_in_workspace(root, path)))

    async def stat(self, path: str) -> FileStat:
        return await remote_stat(self, await self._target(path), path)

    async def write_file(self, path: str, data: bytes) -> None:
        def write(sandbox: Any, root: PurePosixPath) -> None:
            # The daemon creates missing parent directories itself (os.MkdirAll in its
            # bulk-upload handler), so a write is one call: no mkdir round trip first.
            sandbox.fs.upload_file(bytes(data), str(resolve_in_workspace(root, path)))

        with self._file_errors(path):
            await self._call(f"write {path!r}", write)

    async def list_dir(self, path: str = ".") -> list[DirEntry]:
        def listing(sandbox: Any, root: PurePosixPath) -> list[Any]:
            return sandbox.fs.list_files(str(resolve_in_workspace(root, path)))

        with self._file_errors(path):
            infos = await self._call(f"list {path!r}", listing)
        entries = [DirEntry(name=i.name, is_dir=bool(i.is_dir), size=i.size) for i in infos]
        return sorted(entries, key=lambda entry: entry.name)

    async def hibernate(self) -> None:
        """Stop the sandbox (Daytona keeps its disk). Anything but a started sandbox is left
        as it is: a stop only ever follows work, it never wakes a sandbox to stop it."""
        sandbox = self._handle.get()
        if sandbox is None:
            sandbox, _ = await self._find()
        if sandbox is None:
            return
        await self._api(sandbox.refresh_data, action="look at")
        if _state_name(sandbox) != STARTED:
            return
        await self._api(sandbox.stop, timeout=self._options.daytona_wait_timeout, action="stop")

    async def resume(self) -> None:
        await self._running()

    async def status(self) -> Status:
        sandbox = self._handle.get()
        if sandbox is not None:
            await self._api(sandbox.refresh_data, action="look at")
        else:
            sandbox, _ = await self._find()
        if sandbox is None or not _usable(sandbox):
            return "absent"
        return "hibernated" if _state_name(sandbox) in _HIBERNATED | {"error"} else "running"

    # -- finding, waking and replacing the sandbox ------------------------------------------

    def _client(self) -> Any:
        return shared_client(self._sdk, self._options)

    def _stored_id(self) -> str | None:
        if self._state is None:
            return None
        return (self._state.get_sandbox_state(self.user_id, BACKEND) or {}).get("sandbox_id")

    def _remember(self, sandbox: Any) -> None:
        if self._state is not None and self._stored_id() != sandbox.id:
            self._state.put_sandbox_state(self.user_id, BACKEND, {"sandbox_id": sandbox.id})

    async def _find(self) -> tuple[Any, str | None]:
        """The user's usable sandbox, or None and why the old workspace is lost (None when
        the user never had one). Sandboxes whose build failed are deleted on the way."""
        found, lost = await self._api(self._lookup, action="look up")
        if found is not None:
            self._handle.set(found)
            self._remember(found)
        return found, lost

    def _lookup(self) -> tuple[Any, str | None]:
        sdk, client = self._sdk, self._client()
        query = sdk.ListSandboxesQuery(labels={USER_LABEL: self.user_id})
        candidates = list(client.list(query))
        stored = self._stored_id()
        lost: str | None = None
        usable = []
        for sandbox in candidates:
            if _state_name(sandbox) == "build_failed":
                with suppress(sdk.DaytonaError):
                    sandbox.delete(timeout=self._options.daytona_wait_timeout)
            elif _broken(sandbox):
                lost = f"it broke at Daytona ({sandbox.error_reason or 'no reason given'})"
            elif _state_name(sandbox) in _GONE:
                lost = lost or "Daytona deleted it"
            else:
                usable.append(sandbox)
        usable.sort(key=lambda s: (s.id != stored, _state_name(s) != STARTED))
        if usable:
            return usable[0], None
        if stored and not any(s.id == stored for s in candidates):
            try:
                sandbox = client.get(stored)
            except sdk.DaytonaNotFoundError:
                return None, "Daytona no longer has it"
            if _usable(sandbox):
                return sandbox, None
            lost = "it broke at Daytona" if _broken(sandbox) else "Daytona deleted it"
        return None, lost

    async def _running(self) -> tuple[Any, PurePosixPath]:
        sandbox = self._handle.get()
        lost = None
        if sandbox is None:
            sandbox, lost = await self._find()
        if sandbox is None:
            sandbox = await self._api(
                self._client().create, self._create_params(),
                timeout=self._options.daytona_wait_timeout, action="create",
            )
            self._handle.set(sandbox)
            self._remember(sandbox)
            if lost:
                raise WorkspaceLost(
                    f"the workspace could not be brought back: {lost}. A new, empty workspace "
                    "was started; the operation did not run.",
                    reason=lost,
                )
        else:
            try:
                await self._api(self._wake, sandbox, action="start")
            except SandboxError:
                self._handle.set(None)
                raise
        if self._root is None:
            configured = self._options.daytona_workdir
            workdir: str = (
                configured if configured is not None
                else await self._api(sandbox.get_work_dir, action="read the working dir of")
            )
            self._root = PurePosixPath(workdir)
        return sandbox, self._root

    def _wake(self, sandbox: Any) -> None:
        """Bring ``sandbox`` to ``started``, waiting out transitional states."""
        wait = self._options.daytona_wait_timeout
        deadline = self._clock() + wait
        for _ in range(4):
            state = _state_name(sandbox)
            if state == STARTED:
                return
            if state in _STARTING:
                sandbox.wait_for_sandbox_start(timeout=wait)
            elif state in _WAKE:
                sandbox.start(timeout=wait)
            elif state == "error" and getattr(sandbox, "recoverable", False):
                sandbox.recover(timeout=wait)
            elif state in _SETTLING:
                self._settle(sandbox, deadline)
            else:
                raise SandboxError(
                    f"the daytona sandbox of user {self.user_id} is {state} and cannot be "
                    "started; it will be replaced on the next try"
                )
        if _state_name(sandbox) != STARTED:
            raise SandboxError(
                f"the daytona sandbox of user {self.user_id} did not start (it is "
                f"{_state_name(sandbox)}); try again shortly"
            )

    def _settle(self, sandbox: Any, deadline: float) -> None:
        """Look again until ``sandbox`` leaves a transitional state, or fail at ``deadline``."""
        state = _state_name(sandbox)
        while _state_name(sandbox) == state:
            if self._clock() >= deadline:
                raise SandboxError(
                    f"the daytona sandbox of user {self.user_id} is still {state}; try again "
                    "in a minute"
                )
            self._pause(1.0)
            sandbox.refresh_data()

    # -- running an operation ---------------------------------------------------------------

    async def _call(
        self, action: str, op: Callable[[Any, PurePosixPath], T], *, idempotent: bool = True
    ) -> T:
        """Run ``op`` in a worker thread on the started sandbox. When it fails because the
        sandbox is not started or gone, wake or replace it and run ``op`` once more; a
        file operation also gets one more try after a transient error. A command never does
        (it may have run)."""
        sandbox, root = await self._running()
        try:
            return await asyncio.to_thread(op, sandbox, root)
        except self._sdk.DaytonaError as exc:
            first = exc
        if file_level(self._sdk, first):
            raise first
        if not await self._unusable(sandbox, first) and not (
            idempotent and transient(self._sdk, first)
        ):
            raise self._failure(action, first) from first
        self._handle.set(None)
        sandbox, root = await self._running()
        try:
            return await asyncio.to_thread(op, sandbox, root)
        except self._sdk.DaytonaError as exc:
            if file_level(self._sdk, exc):
                raise
            raise self._failure(action, exc) from exc

    async def _unusable(self, sandbox: Any, exc: BaseException) -> bool:
        """Whether ``exc`` came from the sandbox being gone or not started (not from the
        file or command): a 404 not from the daemon inside it, or its state says so."""
        if isinstance(exc, self._sdk.DaytonaNotFoundError) and exc.source != DAEMON:
            return True
        try:
            await asyncio.to_thread(sandbox.refresh_data)
        except self._sdk.DaytonaNotFoundError:
            return True
        except self._sdk.DaytonaError:
            return False
        return _state_name(sandbox) != STARTED

    def _failure(self, action: str, exc: BaseException) -> SandboxError:
        return SandboxError(
            f"could not {action} in the daytona sandbox of user {self.user_id}: "
            f"{describe(self._sdk, exc)}. Your files are kept in the sandbox."
        )

    async def _api(self, fn: Callable[..., T], *args: Any, action: str, **kwargs: Any) -> T:
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except self._sdk.DaytonaError as exc:
            raise self._failure(f"{action} the sandbox", exc) from exc

    def _create_params(self) -> Any:
        opts = self._options
        common = {
            "labels": {USER_LABEL: self.user_id},
            "auto_stop_interval": opts.daytona_auto_stop_interval,
            "auto_archive_interval": opts.daytona_auto_archive_interval,
        }
        if opts.daytona_image:
            return self._sdk.CreateSandboxFromImageParams(image=opts.daytona_image, **common)
        return self._sdk.CreateSandboxFromSnapshotParams(snapshot=opts.daytona_snapshot, **common)

    @contextmanager
    def _file_errors(self, shown: str) -> Iterator[None]:
        try:
            yield
        except self._sdk.DaytonaNotFoundError as exc:
            raise SandboxFileNotFound(f"no such file in the workspace: {shown!r}") from exc
        except self._sdk.DaytonaError as exc:
            raise SandboxError(f"file operation on {shown!r} failed: {exc}") from exc

