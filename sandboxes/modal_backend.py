"""One named Modal sandbox per user; hibernation is a filesystem snapshot kept in the state store.

status: "running" when a sandbox named ``iris-<user_id>`` is live in the sandbox app,
"hibernated" when none is but a snapshot image id is stored, "absent" otherwise.

What happens when Modal misbehaves (docs/acting.md tells it to users):

- A sandbox Modal ended (out of memory, its lifetime, its idle timeout) is forgotten as soon as
  a call says so, and the call runs once more on a sandbox restored from the last snapshot.
  A command is run again only when it never started; one cut off mid-run is reported.
- A restore that fails for any reason but "that snapshot does not exist" is an error: the
  stored snapshot id is kept, so the next try restores it. Only a snapshot Modal no longer has
  (expired, deleted) starts an empty workspace, and ``WorkspaceLost`` tells the caller once.
- Hibernation stores the snapshot id only once the snapshot exists, waits for the sandbox to
  be gone, and never ends a sandbox whose snapshot failed.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Any, TypeVar

from sandboxes.base import (
    COMMAND_HOME,
    DEFAULT_MAX_READ,
    KILL_TIMEOUT,
    RUN_MARKER,
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
    backstop_note,
    cap_output,
    kill_argv,
    new_run_id,
    resolve_in_workspace,
    shell_argv,
    validate_user_id,
    within,
)
from sandboxes.options import SandboxOptions
from sandboxes.remote_files import check_readable, relative_target, remote_range, remote_stat

logger = logging.getLogger(__name__)

BACKEND = "modal"
USER_TAG = "iris-user"
HANDLE_MAX_IDLE = 60.0
BACKSTOP_NOTE = backstop_note("Modal")
BROWSER_PACKAGES = ("chromium", "fonts-liberation")  # for the browser tools (core/browser)

T = TypeVar("T")


async def _drain(stream: Any, into: list[str]) -> None:
    """Keep each chunk as it arrives, so a backstop or a cancel still has what came so far."""
    async for chunk in stream:
        into.append(chunk)


async def _ended(readers: Sequence[asyncio.Future[None]], wait: Awaitable[int]) -> int:
    exit_code, _ = await asyncio.gather(wait, asyncio.gather(*readers))
    return int(exit_code)


class ModalSandbox:
    backend = BACKEND

    def __init__(
        self,
        user_id: str,
        *,
        state: SandboxStateStore,
        options: SandboxOptions | None = None,
        sdk: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``sdk`` is the ``modal`` module, or an object offering the same attributes."""
        self.user_id = validate_user_id(user_id)
        self.name = f"iris-{self.user_id}"
        self._state = state
        self._options = options or SandboxOptions()
        if sdk is None:
            import modal as sdk
        self._modal = sdk
        self._errors = sdk.exception
        self._root = PurePosixPath(self._options.modal_workdir)
        self._handle = HandleCache(HANDLE_MAX_IDLE, clock)

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
        stop: asyncio.Event | None = None,
    ) -> ExecResult:
        timeout = self._options.default_timeout if timeout is None else timeout
        workdir = resolve_in_workspace(self._root, cwd or ".")
        argv = shell_argv(command)
        run_id = new_run_id()
        kwargs = {
            "workdir": str(workdir),
            "timeout": max(1, math.ceil(timeout)),
            "env": {**(env or {}), "HOME": COMMAND_HOME, RUN_MARKER: run_id},
        }
        started = time.monotonic()
        boxes: list[Any] = []

        def start(box: Any) -> Awaitable[Any]:
            boxes.append(box)
            return box.exec.aio(*argv, **kwargs)

        process = await self._call("start the command", start, retry_transient=False)
        out: list[str] = []
        err: list[str] = []
        readers = [asyncio.ensure_future(_drain(process.stdout, out)),
                   asyncio.ensure_future(_drain(process.stderr, err))]
        note = ""
        stopped = False
        try:
            exit_code = await within(
                _ended(readers, process.wait.aio()), timeout + self._options.modal_exec_grace,
                stop,
            )
        except (TimeoutError, self._errors.TimeoutError):
            exit_code, note = TIMEOUT_EXIT_CODE, BACKSTOP_NOTE
            await self._kill(boxes[-1], run_id)
        except Stopped:
            exit_code, stopped = TIMEOUT_EXIT_CODE, True
            await asyncio.shield(self._kill(boxes[-1], run_id))
        except asyncio.CancelledError:
            await asyncio.shield(self._kill(boxes[-1], run_id))
            raise
        except self._errors.Error as exc:
            self._handle.set(None)
            raise SandboxError(
                f"the command was cut off: {self._describe(exc)}. It may have run in part; check "
                "its effects before running it again. Files are as of the last saved snapshot "
                "if the sandbox ended."
            ) from exc
        finally:
            for reader in readers:
                reader.cancel()
        limit = self._options.output_limit
        stdout, cut_out = cap_output("".join(out), limit)
        stderr, cut_err = cap_output("".join(err), limit)
        return ExecResult(
            exit_code=exit_code,
            stdout=stdout,
            stderr=stderr,
            truncated=cut_out or cut_err,
            duration=time.monotonic() - started,
            timed_out=exit_code == TIMEOUT_EXIT_CODE and not stopped,
            note=note,
            stopped=stopped,
        )

    async def _kill(self, sandbox: Any, run_id: str) -> None:
        """End every process of the command marked ``run_id`` (Modal 1.6 has no call that
        kills one exec'd process; ``terminate`` would end the whole sandbox). Best effort,
        bounded: a failure is logged, never raised."""
        try:
            killer = await asyncio.wait_for(
                sandbox.exec.aio(*kill_argv(run_id), timeout=KILL_TIMEOUT), KILL_TIMEOUT
            )
            await asyncio.wait_for(killer.wait.aio(), KILL_TIMEOUT)
        except (TimeoutError, self._errors.Error) as exc:
            logger.warning("modal sandbox %s: could not stop command %s (%s)", self.name,
                           run_id, exc)

    async def read_file(self, path: str, max_bytes: int = DEFAULT_MAX_READ) -> bytes:
        target = str(resolve_in_workspace(self._root, path))
        await check_readable(self, self._relative(path), path, max_bytes)
        with self._file_errors(path):
            return await self._call(f"read {path!r}", lambda box: box.filesystem.read_bytes.aio(
                target
            ))

    async def read_range(self, path: str, offset: int, length: int) -> FileWindow:
        return await remote_range(self, self._relative(path), path, offset, length,
                                  self._options.output_limit)

    async def stat(self, path: str) -> FileStat:
        return await remote_stat(self, self._relative(path), path)

    def _relative(self, path: str) -> str:
        return relative_target(self._root, PurePosixPath(resolve_in_workspace(self._root, path)))

    async def write_file(self, path: str, data: bytes) -> None:
        target = str(resolve_in_workspace(self._root, path))
        with self._file_errors(path):
            await self._call(f"write {path!r}", lambda box: box.filesystem.write_bytes.aio(
                data, target
            ))

    async def list_dir(self, path: str = ".") -> list[DirEntry]:
        target = str(resolve_in_workspace(self._root, path))
        with self._file_errors(path):
            infos = await self._call(f"list {path!r}", lambda box: box.filesystem.list_files.aio(
                target
            ))
        entries = [DirEntry(name=i.name, is_dir=i.is_dir(), size=i.size) for i in infos]
        return sorted(entries, key=lambda entry: entry.name)

    async def hibernate(self) -> None:
        """Snapshot the running sandbox, store the snapshot id, then end the sandbox.

        A failed snapshot changes nothing stored and leaves the sandbox running."""
        sandbox = self._handle.get() or await self._find()
        if sandbox is None:
            return
        try:
            image = await self._snapshot(sandbox)
        except self._errors.Error as exc:
            if self._ended(exc):
                self._handle.set(None)
                raise SandboxError(
                    f"modal sandbox {self.name} had ended before it could be saved "
                    f"({self._describe(exc)}); the last saved snapshot is kept"
                ) from exc
            raise SandboxError(
                f"could not save modal sandbox {self.name}: {self._describe(exc)}; it keeps "
                "running and the last saved snapshot is kept"
            ) from exc
        self._state.put_sandbox_state(self.user_id, BACKEND, {"image_id": image.object_id})
        self._handle.set(None)
        try:
            await asyncio.wait_for(
                sandbox.terminate.aio(wait=True), self._options.modal_terminate_wait
            )
        except (TimeoutError, self._errors.Error) as exc:
            logger.warning(
                "modal sandbox %s is saved as %s but did not end cleanly (%s)",
                self.name, image.object_id, exc,
            )

    async def resume(self) -> None:
        await self._running()

    async def status(self) -> Status:
        if self._handle.get() is not None or await self._find() is not None:
            return "running"
        return "hibernated" if self._snapshot_id() else "absent"

    def _snapshot_id(self) -> str | None:
        stored = self._state.get_sandbox_state(self.user_id, BACKEND) or {}
        return stored.get("image_id") or None

    async def _snapshot(self, sandbox: Any) -> Any:
        """``snapshot_filesystem`` with an explicit timeout, tried once more after a transient
        error (the SDK gives each snapshot a fresh id, so a retry cannot store a half one)."""
        options = self._options
        for attempt in (1, 2):
            try:
                return await sandbox.snapshot_filesystem.aio(
                    timeout=options.modal_snapshot_timeout, ttl=options.modal_snapshot_ttl
                )
            except self._errors.Error as exc:
                if attempt == 2 or not self._transient(exc):
                    raise
                logger.warning("snapshot of %s failed (%s); trying once more", self.name, exc)
        raise AssertionError("unreachable")

    async def _call(
        self, action: str, op: Callable[[Any], Awaitable[T]], *, retry_transient: bool = True
    ) -> T:
        """Run ``op`` on the user's sandbox. If Modal says that sandbox ended or cannot be
        reached, forget it and run ``op`` once more on the sandbox found again or restored.
        ``retry_transient=False`` (commands) retries only when the sandbox had ended, so a
        command that may have started is never run twice."""
        sandbox = await self._running()
        try:
            return await op(sandbox)
        except self._errors.Error as exc:
            if self._final(exc):
                raise
            if not (self._ended(exc) or (retry_transient and self._transient(exc))):
                raise self._failure(action, exc) from exc
            logger.warning("modal sandbox %s: %s failed (%s); trying once more", self.name,
                           action, exc)
        self._handle.set(None)
        sandbox = await self._running()
        try:
            return await op(sandbox)
        except self._errors.Error as exc:
            if self._final(exc):
                raise
            raise self._failure(action, exc) from exc

    async def _find(self) -> Any:
        try:
            found = await self._modal.Sandbox.from_name.aio(self._options.modal_app_name, self.name)
        except self._errors.NotFoundError:
            return None
        except self._errors.Error as exc:
            raise self._failure("look up the sandbox", exc) from exc
        self._handle.set(found)
        return found

    async def _running(self) -> Any:
        sandbox = self._handle.get() or await self._find()
        if sandbox is None:
            sandbox = await self._start()
            self._handle.set(sandbox)
        return sandbox

    async def _start(self) -> Any:
        try:
            app = await self._modal.App.lookup.aio(
                self._options.modal_app_name, create_if_missing=True
            )
            image_id = self._snapshot_id()
            if image_id:
                return await self._restore(app, image_id)
            return await self._create(app, self._base_image())
        except self._errors.AlreadyExistsError:
            pass
        except self._errors.Error as exc:
            raise self._failure("start the sandbox", exc) from exc
        found = await self._find()
        if found is None:
            raise SandboxError(f"modal sandbox {self.name} was started elsewhere but is gone")
        return found

    async def _restore(self, app: Any, image_id: str) -> Any:
        """Create the sandbox from the stored snapshot. Only Modal's "not found" for that
        snapshot starts an empty workspace; every other failure is raised unchanged."""
        image = self._modal.Image.from_id(image_id)
        try:
            return await self._create(app, image)
        except self._errors.NotFoundError as exc:
            missing = exc
        fresh = await self._create(app, self._base_image())
        self._handle.set(fresh)
        reason = f"its snapshot {image_id} no longer exists at Modal (expired or deleted)"
        logger.error("modal sandbox %s: %s (%s); started empty", self.name, reason, missing)
        try:
            self._state.put_sandbox_state(
                self.user_id, BACKEND, {"lost_image_id": image_id, "lost_reason": str(missing)}
            )
        except Exception:
            logger.exception("modal sandbox %s: could not record the lost snapshot", self.name)
        raise WorkspaceLost(
            f"the workspace could not be restored: {reason}. A new, empty workspace was "
            "started; the operation did not run.",
            reason=reason,
        )

    async def _create(self, app: Any, image: Any) -> Any:
        """``Sandbox.create``, once more if the new sandbox ended before it could be used."""
        options = self._options
        for attempt in (1, 2):
            try:
                return await self._modal.Sandbox.create.aio(
                    app=app,
                    name=self.name,
                    tags={USER_TAG: self.user_id},
                    image=image,
                    workdir=str(self._root),
                    timeout=options.modal_timeout,
                    idle_timeout=options.modal_idle_timeout,
                )
            except self._errors.ConflictError:
                if attempt == 2:
                    raise
                logger.warning("modal sandbox %s ended as it started; creating it again",
                               self.name)
        raise AssertionError("unreachable")

    def _base_image(self) -> Any:
        if self._options.modal_image is not None:
            return self._options.modal_image
        return self._modal.Image.debian_slim().apt_install("git", "curl", *BROWSER_PACKAGES)

    def _ended(self, exc: BaseException) -> bool:
        """Modal says the sandbox is gone: finished, terminated, or not there any more. The
        filesystem API reports every other sandbox-level failure as a bare
        ``SandboxFilesystemError`` ("unexpected error"), so that counts as well."""
        e = self._errors
        return isinstance(
            exc, e.ConflictError | e.NotFoundError | e.SandboxTerminatedError
            | e.SandboxTimeoutError | e.ClientClosed,
        ) or type(exc) is e.SandboxFilesystemError

    def _transient(self, exc: BaseException) -> bool:
        e = self._errors
        return isinstance(exc, e.ServiceError | e.ConnectionError | e.InternalError)

    def _final(self, exc: BaseException) -> bool:
        """Answers about the file itself (missing, a directory, too large, …): never retried."""
        e = self._errors
        generic = e.SandboxFilesystemError
        return isinstance(exc, generic) and type(exc) is not generic

    def _describe(self, exc: BaseException) -> str:
        e = self._errors
        if isinstance(exc, e.ResourceExhaustedError):
            kind = "Modal has no capacity or a limit was reached; try again in a few minutes"
        elif self._ended(exc):
            kind = "the sandbox had ended (out of memory, its lifetime or its idle timeout)"
        elif self._transient(exc):
            kind = "Modal could not be reached; try again shortly"
        elif isinstance(exc, e.TimeoutError):
            kind = "Modal timed out"
        elif isinstance(exc, e.AuthError | e.PermissionDeniedError):
            kind = "Modal refused the credentials"
        else:
            kind = "Modal reported an error"
        return f"{kind} ({type(exc).__name__}: {exc})"

    def _failure(self, action: str, exc: BaseException) -> SandboxError:
        return SandboxError(
            f"could not {action} in modal sandbox {self.name}: {self._describe(exc)}. "
            "Your files are kept (in the sandbox or its last saved snapshot)."
        )

    @contextmanager
    def _file_errors(self, shown: str) -> Iterator[None]:
        e = self._errors
        try:
            yield
        except e.SandboxFilesystemNotFoundError as exc:
            raise SandboxFileNotFound(f"no such file in the workspace: {shown!r}") from exc
        except e.SandboxFilesystemIsADirectoryError as exc:
            raise SandboxError(f"{shown!r} is a directory") from exc
        except e.SandboxFilesystemNotADirectoryError as exc:
            raise SandboxError(f"a part of {shown!r} is a file, not a directory") from exc
        except e.SandboxFilesystemError as exc:
            raise SandboxError(f"file operation on {shown!r} failed: {exc}") from exc
