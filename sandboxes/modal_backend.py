"""One named Modal sandbox per user; hibernation is a filesystem snapshot kept in the state store.

status: "running" when a sandbox named ``iris-<user_id>`` is live in the sandbox app,
"hibernated" when none is but a snapshot image id is stored, "absent" otherwise. A sandbox
that Modal ends itself (``idle_timeout`` or ``timeout``) is not snapshotted: the next resume
starts from the last stored snapshot, or from the base image.
"""

from __future__ import annotations

import asyncio
import logging
import math
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

logger = logging.getLogger(__name__)

BACKEND = "modal"
USER_TAG = "iris-user"
_EXEC_GRACE = 30.0
HANDLE_MAX_IDLE = 60.0


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
        self._root = PurePosixPath(self._options.modal_workdir)
        self._handle = HandleCache(HANDLE_MAX_IDLE, clock)

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        timeout = self._options.default_timeout if timeout is None else timeout
        workdir = resolve_in_workspace(self._root, cwd or ".")
        sandbox = await self._running()
        started = time.monotonic()
        errors = self._modal.exception
        try:
            process = await sandbox.exec.aio(
                "bash",
                "-lc",
                command,
                workdir=str(workdir),
                timeout=max(1, math.ceil(timeout)),
                env=env,
            )
            stdout, stderr, exit_code = await asyncio.wait_for(
                asyncio.gather(
                    process.stdout.read.aio(), process.stderr.read.aio(), process.wait.aio()
                ),
                timeout + _EXEC_GRACE,
            )
        except (TimeoutError, errors.TimeoutError):
            stdout, stderr, exit_code = "", "", TIMEOUT_EXIT_CODE
        except errors.Error as exc:
            raise SandboxError(f"modal exec failed in sandbox {self.name}: {exc}") from exc
        limit = self._options.output_limit
        stdout, cut_out = cap_output(stdout, limit)
        stderr, cut_err = cap_output(stderr, limit)
        return ExecResult(
            exit_code=exit_code,
            stdout=stdout,
            stderr=stderr,
            truncated=cut_out or cut_err,
            duration=time.monotonic() - started,
            timed_out=exit_code == TIMEOUT_EXIT_CODE,
        )

    async def read_file(self, path: str) -> bytes:
        target = resolve_in_workspace(self._root, path)
        sandbox = await self._running()
        with self._filesystem_errors(path):
            return await sandbox.filesystem.read_bytes.aio(str(target))

    async def write_file(self, path: str, data: bytes) -> None:
        target = resolve_in_workspace(self._root, path)
        sandbox = await self._running()
        with self._filesystem_errors(path):
            await sandbox.filesystem.write_bytes.aio(data, str(target))

    async def list_dir(self, path: str = ".") -> list[DirEntry]:
        target = resolve_in_workspace(self._root, path)
        sandbox = await self._running()
        with self._filesystem_errors(path):
            infos = await sandbox.filesystem.list_files.aio(str(target))
        entries = [DirEntry(name=i.name, is_dir=i.is_dir(), size=i.size) for i in infos]
        return sorted(entries, key=lambda entry: entry.name)

    async def hibernate(self) -> None:
        sandbox = self._handle.get() or await self._find()
        if sandbox is None:
            return
        try:
            image = await sandbox.snapshot_filesystem.aio(ttl=self._options.modal_snapshot_ttl)
            self._state.put_sandbox_state(self.user_id, BACKEND, {"image_id": image.object_id})
            await sandbox.terminate.aio()
        except self._modal.exception.Error as exc:
            raise SandboxError(f"could not hibernate modal sandbox {self.name}: {exc}") from exc
        self._handle.set(None)

    async def resume(self) -> None:
        await self._running()

    async def status(self) -> Status:
        if self._handle.get() is not None or await self._find() is not None:
            return "running"
        return "hibernated" if self._snapshot_id() else "absent"

    def _snapshot_id(self) -> str | None:
        stored = self._state.get_sandbox_state(self.user_id, BACKEND) or {}
        return stored.get("image_id")

    async def _find(self) -> Any:
        try:
            found = await self._modal.Sandbox.from_name.aio(self._options.modal_app_name, self.name)
        except self._modal.exception.NotFoundError:
            return None
        except self._modal.exception.Error as exc:
            raise SandboxError(f"could not look up modal sandbox {self.name}: {exc}") from exc
        self._handle.set(found)
        return found

    async def _running(self) -> Any:
        sandbox = self._handle.get() or await self._find()
        if sandbox is None:
            sandbox = await self._start()
            self._handle.set(sandbox)
        return sandbox

    async def _start(self) -> Any:
        errors = self._modal.exception
        try:
            app = await self._modal.App.lookup.aio(
                self._options.modal_app_name, create_if_missing=True
            )
            return await self._create_from_snapshot(app)
        except errors.AlreadyExistsError:
            pass
        except errors.Error as exc:
            raise SandboxError(f"could not start modal sandbox {self.name}: {exc}") from exc
        found = await self._find()
        if found is None:
            raise SandboxError(f"modal sandbox {self.name} was started elsewhere but is gone")
        return found

    async def _create_from_snapshot(self, app: Any) -> Any:
        image_id = self._snapshot_id()
        if image_id:
            try:
                image = await self._modal.Image.from_id.aio(image_id)
                return await self._create(app, image)
            except self._modal.exception.AlreadyExistsError:
                raise
            except Exception as exc:
                logger.warning(
                    "modal sandbox %s: restoring snapshot %s failed (%s); starting from the base "
                    "image, the workspace starts empty",
                    self.name,
                    image_id,
                    exc,
                )
        return await self._create(app, self._base_image())

    async def _create(self, app: Any, image: Any) -> Any:
        options = self._options
        return await self._modal.Sandbox.create.aio(
            app=app,
            name=self.name,
            tags={USER_TAG: self.user_id},
            image=image,
            workdir=str(self._root),
            timeout=options.modal_timeout,
            idle_timeout=options.modal_idle_timeout,
        )

    def _base_image(self) -> Any:
        if self._options.modal_image is not None:
            return self._options.modal_image
        return self._modal.Image.debian_slim().apt_install("git", "curl")

    @contextmanager
    def _filesystem_errors(self, shown: str) -> Iterator[None]:
        errors = self._modal.exception
        try:
            yield
        except errors.SandboxFilesystemNotFoundError as exc:
            raise SandboxFileNotFound(f"no such file in the workspace: {shown!r}") from exc
        except errors.Error as exc:
            raise SandboxError(f"file operation on {shown!r} failed: {exc}") from exc
