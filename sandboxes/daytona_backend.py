"""One Daytona sandbox per user, labelled ``iris-user=<user_id>``; Daytona keeps its disk.

Commands run as ``bash -lc <command>`` through ``process.exec``, which returns stdout and
stderr combined: ``ExecResult.stdout`` holds both and ``stderr`` is always empty.

status: "running" for started and transitional states (creating, starting, restoring ...),
"hibernated" for stopped, archived, paused and error states (``resume`` calls ``start()``),
"absent" when no labelled sandbox exists or it is destroyed.

The synchronous ``Daytona`` client runs in worker threads: it binds to no event loop, so one
sandbox object survives across ``asyncio.run`` calls and needs no closing.
"""

from __future__ import annotations

import asyncio
import math
import shlex
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Any

from sandboxes.base import (
    TIMEOUT_EXIT_CODE,
    DirEntry,
    ExecResult,
    HandleCache,
    SandboxError,
    SandboxFileNotFound,
    SandboxStateStore,
    Status,
    cap_output,
    resolve_in_workspace,
    validate_user_id,
)
from sandboxes.options import SandboxOptions

BACKEND = "daytona"
USER_LABEL = "iris-user"
HANDLE_MAX_IDLE = 60.0
_HIBERNATED = frozenset(
    {"stopped", "stopping", "archived", "archiving", "paused", "pausing", "error", "build_failed"}
)
_GONE = frozenset({"destroyed", "destroying"})
_NEEDS_START = frozenset({"stopped", "archived", "paused", "error"})


def _state_name(sandbox: Any) -> str:
    state = sandbox.state
    return str(getattr(state, "value", state) or "unknown")


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
    ) -> None:
        """``sdk`` is the ``daytona`` module, or an object offering the same attributes."""
        self.user_id = validate_user_id(user_id)
        self._options = options or SandboxOptions()
        if sdk is None:
            import daytona as sdk
        self._sdk = sdk
        opts = self._options
        config = sdk.DaytonaConfig(
            api_key=opts.daytona_api_key, api_url=opts.daytona_api_url, target=opts.daytona_target
        )
        try:
            self._client = sdk.Daytona(config)
        except sdk.DaytonaError as exc:
            raise SandboxError(f"cannot configure the Daytona client: {exc}") from exc
        self._handle = HandleCache(HANDLE_MAX_IDLE, clock)
        self._root: PurePosixPath | None = None

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        timeout = self._options.default_timeout if timeout is None else timeout
        sandbox, root = await self._running()
        workdir = resolve_in_workspace(root, cwd or ".")
        started = time.monotonic()
        try:
            response = await asyncio.to_thread(
                sandbox.process.exec,
                f"bash -lc {shlex.quote(command)}",
                cwd=str(workdir),
                env=env,
                timeout=max(1, math.ceil(timeout)),
            )
        except self._sdk.DaytonaTimeoutError:
            output, exit_code = "", TIMEOUT_EXIT_CODE
        except self._sdk.DaytonaError as exc:
            raise SandboxError(f"daytona exec failed for user {self.user_id}: {exc}") from exc
        else:
            output = response.result or ""
            exit_code = TIMEOUT_EXIT_CODE if response.exit_code is None else response.exit_code
        output, truncated = cap_output(output, self._options.output_limit)
        return ExecResult(
            exit_code=exit_code,
            stdout=output,
            stderr="",
            truncated=truncated,
            duration=time.monotonic() - started,
            timed_out=exit_code == TIMEOUT_EXIT_CODE,
        )

    async def read_file(self, path: str) -> bytes:
        sandbox, root = await self._running()
        target = resolve_in_workspace(root, path)
        with self._file_errors(path):
            data = await asyncio.to_thread(sandbox.fs.download_file, str(target))
        return bytes(data or b"")

    async def write_file(self, path: str, data: bytes) -> None:
        sandbox, root = await self._running()
        target = resolve_in_workspace(root, path)
        with self._file_errors(path):
            if target.parent != root:
                parent = target.parent.relative_to(root)
                made = await asyncio.to_thread(
                    sandbox.process.exec, f"mkdir -p {shlex.quote(str(parent))}", cwd=str(root)
                )
                if made.exit_code != 0:
                    raise SandboxError(f"cannot create the directory for {path!r}: {made.result}")
            await asyncio.to_thread(sandbox.fs.upload_file, bytes(data), str(target))

    async def list_dir(self, path: str = ".") -> list[DirEntry]:
        sandbox, root = await self._running()
        target = resolve_in_workspace(root, path)
        with self._file_errors(path):
            infos = await asyncio.to_thread(sandbox.fs.list_files, str(target))
        entries = [DirEntry(name=i.name, is_dir=bool(i.is_dir), size=i.size) for i in infos]
        return sorted(entries, key=lambda entry: entry.name)

    async def hibernate(self) -> None:
        sandbox = self._handle.get() or await self._find()
        if sandbox is None or _state_name(sandbox) in _HIBERNATED | _GONE:
            return
        with self._api_errors("stop"):
            await asyncio.to_thread(sandbox.stop, timeout=self._options.daytona_wait_timeout)

    async def resume(self) -> None:
        await self._running()

    async def status(self) -> Status:
        sandbox = self._handle.get()
        if sandbox is not None:
            with self._api_errors("refresh"):
                await asyncio.to_thread(sandbox.refresh_data)
        else:
            sandbox = await self._find()
        if sandbox is None or _state_name(sandbox) in _GONE:
            return "absent"
        return "hibernated" if _state_name(sandbox) in _HIBERNATED else "running"

    async def _find(self) -> Any:
        query = self._sdk.ListSandboxesQuery(labels={USER_LABEL: self.user_id})
        with self._api_errors("look up"):
            found = await asyncio.to_thread(self._first_alive, query)
        if found is not None:
            self._handle.set(found)
        return found

    def _first_alive(self, query: Any) -> Any:
        for sandbox in self._client.list(query):
            if _state_name(sandbox) not in _GONE:
                return sandbox
        return None

    async def _running(self) -> tuple[Any, PurePosixPath]:
        sandbox = self._handle.get() or await self._find()
        if sandbox is None:
            with self._api_errors("create"):
                sandbox = await asyncio.to_thread(
                    self._client.create,
                    self._create_params(),
                    timeout=self._options.daytona_wait_timeout,
                )
            self._handle.set(sandbox)
        elif _state_name(sandbox) in _NEEDS_START:
            with self._api_errors("start"):
                await asyncio.to_thread(sandbox.start, timeout=self._options.daytona_wait_timeout)
        if self._root is None:
            workdir = self._options.daytona_workdir
            if workdir is None:
                with self._api_errors("read the working directory of"):
                    workdir = await asyncio.to_thread(sandbox.get_work_dir)
            self._root = PurePosixPath(workdir)
        return sandbox, self._root

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
    def _api_errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except self._sdk.DaytonaError as exc:
            raise SandboxError(
                f"could not {action} the daytona sandbox of user {self.user_id}: {exc}"
            ) from exc

    @contextmanager
    def _file_errors(self, shown: str) -> Iterator[None]:
        try:
            yield
        except self._sdk.DaytonaNotFoundError as exc:
            raise SandboxFileNotFound(f"no such file in the workspace: {shown!r}") from exc
        except self._sdk.DaytonaError as exc:
            raise SandboxError(f"file operation on {shown!r} failed: {exc}") from exc
