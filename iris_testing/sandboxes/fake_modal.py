"""A fake ``modal`` module: apps, named sandboxes, exec, the filesystem API and snapshots.

It raises the real ``modal.exception`` classes where the installed SDK (1.6.4) raises them, and
every call is bound to the real signature as it is made (see ``Recorder``). What the SDK source
shows, the fake does the same way:

- ``Image.from_id(id)`` is lazy: it never fails; a missing or expired image fails at first use,
  as ``NotFoundError`` from ``Sandbox.create``. ``Image.from_id.aio`` is deprecated and warns
  with Modal's own ``DeprecationError``.
- ``Sandbox.create`` refuses ``timeout=None``, a relative ``workdir`` and a name in use
  (``AlreadyExistsError``); a scheduling timeout surfaces as ``ResourceExhaustedError``
  ("Insufficient capacity"), and a sandbox that finished before it was scheduled as
  ``ConflictError``.
- ``exec`` refuses a relative workdir (``InvalidError``); a command past its timeout is killed,
  its stdout/stderr end with what it wrote so far and ``wait()`` returns -1.
- ``process.stdout`` / ``stderr`` are ``StreamReader``s: ``read()`` returns everything until
  EOF, and ``async for chunk in stream`` yields chunks as they arrive (io_streams.py; Modal's
  docs: "As an asynchronous iterable, the object supports the for and async for statements").
  ``ContainerProcess`` has ``wait``/``poll`` and no call that kills the process
  (container_process.py, 1.6.4); only ``Sandbox.terminate`` ends anything, the whole sandbox.
- The filesystem API needs absolute paths (``InvalidError``); it maps "not found", "is a
  directory" and "not a directory" to their ``SandboxFilesystem*Error`` classes, and passes
  sandbox-level failures through the SDK's own ``translate_exec_errors`` (an unavailable
  sandbox becomes ``NotFoundError``, anything else a bare ``SandboxFilesystemError``).
- ``snapshot_filesystem(timeout=55)`` raises ``modal.exception.TimeoutError`` when the snapshot
  takes longer than ``timeout``; ``ttl`` must be positive or None (``InvalidError``).
- ``terminate()`` returns before the sandbox is gone; ``terminate(wait=True)`` waits.

What the SDK source cannot show (the server decides), the fake assumes and says so here:

- An ended sandbox (out of memory, lifetime, idle timeout, terminated) answers ``exec`` and
  ``snapshot_filesystem`` with ``ConflictError`` (the SDK raises it for a finished task).
- A sandbox whose ``terminate()`` was not waited for is "dying": still found by
  ``Sandbox.from_name`` and still holding its name, while every call on it fails as ended.
- How long a snapshot takes: ``FakeModal.snapshot_seconds`` (no real time passes).
- ``FakeModal.exec_overruns``: Modal fails to end a command at its exec timeout and never
  reports its end (what Iris' backstop guards against); the command runs until killed.
"""

from __future__ import annotations

import asyncio
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import modal.exception as errors
from modal._utils.sandbox_fs_utils import translate_exec_errors

from iris_testing.sandboxes.fake_common import Container, Recorder, aio, next_id

MODAL_HOME = "/root"


def modal_targets() -> dict[str, Any]:
    import modal
    from modal.container_process import ContainerProcess
    from modal.io_streams import StreamReader
    from modal.sandbox.sandbox import SandboxFilesystem

    return {
        "App.lookup": modal.App.lookup,
        "Sandbox.create": modal.Sandbox.create,
        "Sandbox.from_name": modal.Sandbox.from_name,
        "Image.debian_slim": modal.Image.debian_slim,
        "Image.apt_install": modal.Image.apt_install,
        "Image.from_id": modal.Image.from_id,
        "Sandbox.exec": modal.Sandbox.exec,
        "Sandbox.snapshot_filesystem": modal.Sandbox.snapshot_filesystem,
        "Sandbox.terminate": modal.Sandbox.terminate,
        # modal's generated stubs declare ``read`` as an instance attribute of the generic
        # StreamReader[T] ("ambiguous" on the class); at runtime it is the method
        "StreamReader.read": StreamReader.read,  # type: ignore[misc]
        "StreamReader.__aiter__": StreamReader.__aiter__,
        "ContainerProcess.wait": ContainerProcess.wait,
        "SandboxFilesystem.read_bytes": SandboxFilesystem.read_bytes,
        "SandboxFilesystem.write_bytes": SandboxFilesystem.write_bytes,
        "SandboxFilesystem.list_files": SandboxFilesystem.list_files,
    }


@dataclass
class FakeImage:
    object_id: str
    files: Path | None
    """Directory holding the image's filesystem; None for the empty base image."""
    fake: FakeModal

    def apt_install(self, *packages: str, **kwargs: Any) -> FakeImage:
        self.fake.recorder.record("Image.apt_install", *packages, **kwargs)
        return self


@dataclass
class FakeFileInfo:
    name: str
    path: str
    size: int
    directory: bool

    def is_dir(self) -> bool:
        return self.directory


class _FromId:
    """``Image.from_id``: synchronous and lazy; ``.aio`` still works but is deprecated."""

    def __init__(self, fake: FakeModal) -> None:
        self._fake = fake

    def __call__(self, image_id: str, client: Any = None) -> FakeImage:
        kwargs = {"client": client} if client is not None else {}
        self._fake.recorder.record("Image.from_id", image_id, **kwargs)
        return FakeImage(image_id, None, self._fake)

    async def aio(self, image_id: str, client: Any = None) -> FakeImage:
        warnings.warn(
            "2025-11-14: The async constructor Image.from_id.aio(...) will be deprecated in a "
            "future version of Modal. Please use Image.from_id(...) instead",
            errors.DeprecationError,
            stacklevel=2,
        )
        return self(image_id, client)


class FakeModal:
    """Offers ``App``, ``Sandbox``, ``Image`` and ``exception`` like the ``modal`` module."""

    exception = errors

    def __init__(self, root: Path) -> None:
        self.root = root
        self.recorder = Recorder(targets=modal_targets())
        self.sandboxes: list[FakeModalSandbox] = []
        self.images: dict[str, FakeImage] = {}
        self.apps: set[str] = set()
        self.snapshot_seconds = 1.0
        self.from_name_misses = 0
        self.exec_overruns = False
        self.processes: list[FakeContainerProcess] = []
        self.App = SimpleNamespace(lookup=aio(self._app_lookup))
        self.Sandbox = SimpleNamespace(create=aio(self._create), from_name=aio(self._from_name))
        self.Image = SimpleNamespace(debian_slim=self._debian_slim, from_id=_FromId(self))

    @property
    def calls(self) -> list[Any]:
        return self.recorder.calls

    def named(self, app_name: str, name: str) -> FakeModalSandbox | None:
        """The sandbox holding ``name``: running, or dying after a terminate not waited for."""
        for sandbox in self.sandboxes:
            if sandbox.app == app_name and sandbox.name == name and sandbox.phase != "finished":
                return sandbox
        return None

    def expire(self, image_id: str) -> None:
        """Modal drops a snapshot (its ttl passed, or it was deleted)."""
        del self.images[image_id]

    async def _app_lookup(self, name: str, **kwargs: Any) -> Any:
        self.recorder.record("App.lookup", name, **kwargs)
        if name not in self.apps and not kwargs.get("create_if_missing"):
            raise errors.NotFoundError(f"App '{name}' not found")
        self.apps.add(name)
        return SimpleNamespace(name=name, app_id=f"ap-{name}")

    def _debian_slim(self, *args: Any, **kwargs: Any) -> FakeImage:
        self.recorder.record("Image.debian_slim", *args, **kwargs)
        return FakeImage("im-base", None, self)

    async def _create(self, *args: str, **kwargs: Any) -> FakeModalSandbox:
        self.recorder.record("Sandbox.create", *args, **kwargs)
        app, name, image = kwargs.get("app"), kwargs.get("name"), kwargs.get("image")
        if app is None or getattr(app, "app_id", None) is None:
            raise errors.InvalidError("Sandboxes require an App when created outside of Modal")
        if kwargs.get("timeout", 300) is None:
            raise errors.InvalidError("`timeout=None` is only supported for persistent Sandboxes.")
        workdir = kwargs.get("workdir")
        if workdir is not None and not workdir.startswith("/"):
            raise errors.InvalidError(f"workdir must be an absolute path, got: {workdir}")
        files = None
        if image is not None and image.object_id != "im-base":
            stored = self.images.get(image.object_id)
            if stored is None:
                raise errors.NotFoundError(f"Image {image.object_id} not found")
            files = stored.files
        if name and self.named(app.name, name):
            raise errors.AlreadyExistsError(f"Sandbox with name '{name}' already exists")
        sandbox_id = next_id("sb")
        machine = self.root / "sandboxes" / sandbox_id
        if files is not None:
            shutil.copytree(files, machine, symlinks=True)
        container = Container(machine, MODAL_HOME)
        container.host(workdir or "/").mkdir(parents=True, exist_ok=True)
        sandbox = FakeModalSandbox(self, sandbox_id, app.name, name, container, workdir or "/")
        self.sandboxes.append(sandbox)
        return sandbox

    async def _from_name(self, app_name: str, name: str, **kwargs: Any) -> FakeModalSandbox:
        self.recorder.record("Sandbox.from_name", app_name, name, **kwargs)
        found = self.named(app_name, name)
        if self.from_name_misses:
            self.from_name_misses -= 1
            found = None
        if found is None:
            raise errors.NotFoundError(f"Sandbox with name '{name}' not found")
        return found


class FakeModalSandbox:
    def __init__(
        self,
        fake: FakeModal,
        object_id: str,
        app: str,
        name: str | None,
        container: Container,
        workdir: str,
    ) -> None:
        self.fake = fake
        self.object_id = object_id
        self.app = app
        self.name = name
        self.container = container
        self.workdir = workdir
        self.phase = "running"
        """running → dying (terminate without wait) → finished; or running → finished (ended)."""
        self.exec = aio(self._exec)
        self.snapshot_filesystem = aio(self._snapshot_filesystem)
        self.terminate = aio(self._terminate)
        self.filesystem = FakeModalFilesystem(self)

    @property
    def terminated(self) -> bool:
        return self.phase != "running"

    def end(self) -> None:
        """Modal ends the sandbox itself: out of memory, its lifetime, or its idle timeout."""
        self.phase = "finished"

    def check_alive(self) -> None:
        if self.phase != "running":
            raise errors.ConflictError("Sandbox already finished")

    async def _exec(self, *args: str, **kwargs: Any) -> FakeContainerProcess:
        self.fake.recorder.record("Sandbox.exec", *args, **kwargs)
        workdir = kwargs.get("workdir")
        if workdir is not None and not workdir.startswith("/"):
            raise errors.InvalidError(f"workdir must be an absolute path, got: {workdir}")
        if not all(isinstance(arg, str) for arg in args):
            raise errors.InvalidError("All entrypoint arguments must be strings")
        self.check_alive()
        host_dir = self.container.host(workdir or self.workdir)
        if not host_dir.is_dir():
            raise errors.InvalidError(f"workdir {workdir} does not exist")
        env = self.container.env(kwargs.get("env"))
        timeout = None if self.fake.exec_overruns else kwargs.get("timeout")
        process = FakeContainerProcess(self.fake.recorder)
        process.start(self.container.run(list(args), host_dir, env, timeout, process.feed))
        self.fake.processes.append(process)
        return process

    async def _snapshot_filesystem(self, *args: Any, **kwargs: Any) -> FakeImage:
        self.fake.recorder.record("Sandbox.snapshot_filesystem", *args, **kwargs)
        timeout = args[0] if args else kwargs.get("timeout", 55)
        ttl = kwargs.get("ttl", 30 * 24 * 3600)
        if ttl is not None and ttl <= 0:
            raise errors.InvalidError("ttl must be positive, or None to disable expiry")
        self.check_alive()
        if self.fake.snapshot_seconds > timeout:
            raise errors.TimeoutError("Timeout expired")
        image_id = next_id("im-snap")
        files = self.fake.root / "images" / image_id
        self.container.copy_to(files)
        image = FakeImage(image_id, files, self.fake)
        self.fake.images[image_id] = image
        return image

    async def _terminate(self, **kwargs: Any) -> int | None:
        self.fake.recorder.record("Sandbox.terminate", **kwargs)
        if kwargs.get("wait"):
            self.phase = "finished"
            return 137
        if self.phase == "running":
            self.phase = "dying"
        return None


class FakeStreamReader:
    """``read()`` until EOF, or ``async for`` over the chunks as they come."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        self.read = aio(self._read)

    def feed(self, chunk: bytes) -> None:
        self._chunks.put_nowait(chunk)

    async def _iterate(self) -> Any:
        while chunk := await self._chunks.get():
            yield chunk.decode()

    def __aiter__(self) -> Any:
        self._recorder.record("StreamReader.__aiter__")
        return self._iterate()

    async def _read(self) -> str:
        self._recorder.record("StreamReader.read")
        return "".join([chunk async for chunk in self._iterate()])


class FakeContainerProcess:
    """Exit code -1 when the exec timeout expires, as modal's ContainerProcess.wait() reports;
    the streams then hold what the command wrote before it was stopped."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._run: asyncio.Future[Any] | None = None
        self.stdout = FakeStreamReader(recorder)
        self.stderr = FakeStreamReader(recorder)
        self.wait = aio(self._wait)

    def start(self, run: Any) -> None:
        self._run = asyncio.ensure_future(run)

    @property
    def finished(self) -> bool:
        """The command's processes are gone (their output pipes closed)."""
        return self._run is not None and self._run.done()

    def feed(self, fd: int, chunk: bytes) -> None:
        (self.stdout if fd == 1 else self.stderr).feed(chunk)

    async def _wait(self) -> int:
        self._recorder.record("ContainerProcess.wait")
        assert self._run is not None
        # the process runs in the sandbox: a client that stops waiting does not end it
        code = (await asyncio.shield(self._run))[2]
        return -1 if code is None else code


class FakeModalFilesystem:
    """Absolute paths only, like ``Sandbox.filesystem``; failures to reach the sandbox go
    through the SDK's own ``translate_exec_errors``."""

    def __init__(self, sandbox: FakeModalSandbox) -> None:
        self._sandbox = sandbox
        self.read_bytes = aio(self._read_bytes)
        self.write_bytes = aio(self._write_bytes)
        self.list_files = aio(self._list_files)

    def _host(self, name: str, *args: Any) -> Path:
        remote_path = args[-1]
        if not remote_path.startswith("/"):
            raise errors.InvalidError(
                f"Sandbox.filesystem.{name}() currently only supports absolute remote_path values"
            )
        with translate_exec_errors(name, remote_path):
            self._sandbox.fake.recorder.record(f"SandboxFilesystem.{name}", *args)
            self._sandbox.check_alive()
        return self._sandbox.container.host(remote_path)

    async def _read_bytes(self, remote_path: str) -> bytes:
        host = self._host("read_bytes", remote_path)
        if host.is_dir():
            raise errors.SandboxFilesystemIsADirectoryError(f"Is a directory: {remote_path}")
        if not host.is_file():
            raise errors.SandboxFilesystemNotFoundError(f"No such file: {remote_path}")
        return host.read_bytes()

    async def _write_bytes(self, data: bytes, remote_path: str) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError("data must be bytes-like")
        host = self._host("write_bytes", data, remote_path)
        if host.is_dir():
            raise errors.SandboxFilesystemIsADirectoryError(f"Is a directory: {remote_path}")
        for parent in reversed(host.parents):
            if parent.is_file():
                raise errors.SandboxFilesystemNotADirectoryError(f"Not a directory: {remote_path}")
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_bytes(bytes(data))

    async def _list_files(self, remote_path: str) -> list[FakeFileInfo]:
        host = self._host("list_files", remote_path)
        if host.is_file():
            raise errors.SandboxFilesystemNotADirectoryError(f"Not a directory: {remote_path}")
        if not host.is_dir():
            raise errors.SandboxFilesystemNotFoundError(f"No such file: {remote_path}")
        return [
            FakeFileInfo(
                name=entry.name,
                path=f"{remote_path.rstrip('/')}/{entry.name}",
                size=entry.stat().st_size,
                directory=entry.is_dir(),
            )
            for entry in host.iterdir()
        ]
