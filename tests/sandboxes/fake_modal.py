"""A fake ``modal`` module: apps, named sandboxes, exec, filesystem API and snapshots."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.sandboxes.fake_common import Container, Recorder, aio, next_id


class ModalError(Exception):
    pass


class NotFoundError(ModalError):
    pass


class AlreadyExistsError(ModalError):
    pass


class ModalTimeoutError(ModalError):
    pass


class SandboxTerminatedError(ModalError):
    pass


class SandboxFilesystemError(ModalError):
    pass


class SandboxFilesystemNotFoundError(SandboxFilesystemError):
    pass


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


class FakeModal:
    """Offers ``App``, ``Sandbox``, ``Image`` and ``exception`` like the ``modal`` module."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.recorder = Recorder()
        self.sandboxes: list[FakeModalSandbox] = []
        self.images: dict[str, FakeImage] = {}
        self.apps: set[str] = set()
        self.fail_from_id = False
        self.fail_create_from_snapshot = False
        self.from_name_misses = 0
        self.exception = SimpleNamespace(
            Error=ModalError,
            NotFoundError=NotFoundError,
            AlreadyExistsError=AlreadyExistsError,
            TimeoutError=ModalTimeoutError,
            SandboxTerminatedError=SandboxTerminatedError,
            SandboxFilesystemError=SandboxFilesystemError,
            SandboxFilesystemNotFoundError=SandboxFilesystemNotFoundError,
        )
        self.App = SimpleNamespace(lookup=aio(self._app_lookup))
        self.Sandbox = SimpleNamespace(create=aio(self._create), from_name=aio(self._from_name))
        self.Image = SimpleNamespace(debian_slim=self._debian_slim, from_id=aio(self._from_id))

    @property
    def calls(self) -> list[Any]:
        return self.recorder.calls

    def running(self, app_name: str, name: str) -> FakeModalSandbox | None:
        for sandbox in self.sandboxes:
            if sandbox.app == app_name and sandbox.name == name and not sandbox.terminated:
                return sandbox
        return None

    async def _app_lookup(self, name: str, **kwargs: Any) -> Any:
        self.recorder.record("App.lookup", name, **kwargs)
        if name not in self.apps and not kwargs.get("create_if_missing"):
            raise NotFoundError(f"app {name} not found")
        self.apps.add(name)
        return SimpleNamespace(name=name)

    def _debian_slim(self, *args: Any, **kwargs: Any) -> FakeImage:
        self.recorder.record("Image.debian_slim", *args, **kwargs)
        return FakeImage("im-base", None, self)

    async def _from_id(self, image_id: str) -> FakeImage:
        self.recorder.record("Image.from_id", image_id)
        if self.fail_from_id or image_id not in self.images:
            raise NotFoundError(f"image {image_id} not found")
        return self.images[image_id]

    async def _create(self, *args: str, **kwargs: Any) -> FakeModalSandbox:
        self.recorder.record("Sandbox.create", *args, **kwargs)
        app, name, image = kwargs["app"], kwargs.get("name"), kwargs.get("image")
        if name and self.running(app.name, name):
            raise AlreadyExistsError(f"sandbox {name} already exists")
        if self.fail_create_from_snapshot and image is not None and image.files is not None:
            raise ModalError("could not restore the image")
        sandbox_id = next_id("sb")
        machine = self.root / "sandboxes" / sandbox_id
        if image is not None and image.files is not None:
            shutil.copytree(image.files, machine, symlinks=True)
        container = Container(machine)
        workdir = kwargs.get("workdir") or "/"
        container.host(workdir).mkdir(parents=True, exist_ok=True)
        sandbox = FakeModalSandbox(self, sandbox_id, app.name, name, container, workdir)
        self.sandboxes.append(sandbox)
        return sandbox

    async def _from_name(self, app_name: str, name: str, **kwargs: Any) -> FakeModalSandbox:
        self.recorder.record("Sandbox.from_name", app_name, name, **kwargs)
        found = self.running(app_name, name)
        if self.from_name_misses:
            self.from_name_misses -= 1
            found = None
        if found is None:
            raise NotFoundError(f"no running sandbox {name} in app {app_name}")
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
        self.terminated = False
        self.exec = aio(self._exec)
        self.snapshot_filesystem = aio(self._snapshot_filesystem)
        self.terminate = aio(self._terminate)
        self.filesystem = FakeModalFilesystem(self)

    def check_alive(self) -> None:
        if self.terminated:
            raise SandboxTerminatedError(f"sandbox {self.object_id} was terminated")

    async def _exec(self, *args: str, **kwargs: Any) -> FakeContainerProcess:
        self.fake.recorder.record("Sandbox.exec", *args, **kwargs)
        self.check_alive()
        workdir = self.container.host(kwargs.get("workdir") or self.workdir)
        if not workdir.is_dir():
            raise ModalError(f"workdir {kwargs.get('workdir')} does not exist")
        env = self.container.env(workdir, kwargs.get("env"))
        run = self.container.run(list(args), workdir, env, kwargs.get("timeout"))
        return FakeContainerProcess(self.fake.recorder, asyncio.ensure_future(run))

    async def _snapshot_filesystem(self, *args: Any, **kwargs: Any) -> FakeImage:
        self.fake.recorder.record("Sandbox.snapshot_filesystem", *args, **kwargs)
        self.check_alive()
        image_id = next_id("im-snap")
        files = self.fake.root / "images" / image_id
        self.container.copy_to(files)
        image = FakeImage(image_id, files, self.fake)
        self.fake.images[image_id] = image
        return image

    async def _terminate(self, **kwargs: Any) -> None:
        self.fake.recorder.record("Sandbox.terminate", **kwargs)
        self.terminated = True


class FakeContainerProcess:
    """Exit code -1 when the exec timeout expires, as modal's ContainerProcess.wait() reports."""

    def __init__(self, recorder: Recorder, run: asyncio.Future[Any]) -> None:
        self._run = run
        self.stdout = SimpleNamespace(read=aio(self._reader(recorder, 0)))
        self.stderr = SimpleNamespace(read=aio(self._reader(recorder, 1)))
        self.wait = aio(self._wait)
        self._recorder = recorder

    def _reader(self, recorder: Recorder, index: int) -> Any:
        async def read() -> str:
            recorder.record("StreamReader.read")
            return (await self._run)[index].decode()

        return read

    async def _wait(self) -> int:
        self._recorder.record("ContainerProcess.wait")
        code = (await self._run)[2]
        return -1 if code is None else code


class FakeModalFilesystem:
    """Absolute paths only, like ``Sandbox.filesystem``."""

    def __init__(self, sandbox: FakeModalSandbox) -> None:
        self._sandbox = sandbox
        self.read_bytes = aio(self._read_bytes)
        self.write_bytes = aio(self._write_bytes)
        self.list_files = aio(self._list_files)

    def _host(self, name: str, *args: Any) -> Path:
        self._sandbox.fake.recorder.record(f"SandboxFilesystem.{name}", *args)
        remote_path = args[-1]
        self._sandbox.check_alive()
        if not remote_path.startswith("/"):
            raise SandboxFilesystemError(f"{remote_path} is not an absolute path")
        return self._sandbox.container.host(remote_path)

    async def _read_bytes(self, remote_path: str) -> bytes:
        host = self._host("read_bytes", remote_path)
        if not host.is_file():
            raise SandboxFilesystemNotFoundError(f"{remote_path} does not exist")
        return host.read_bytes()

    async def _write_bytes(self, data: bytes, remote_path: str) -> None:
        host = self._host("write_bytes", data, remote_path)
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_bytes(bytes(data))

    async def _list_files(self, remote_path: str) -> list[FakeFileInfo]:
        host = self._host("list_files", remote_path)
        if not host.is_dir():
            raise SandboxFilesystemNotFoundError(f"{remote_path} is not a directory")
        return [
            FakeFileInfo(
                name=entry.name,
                path=f"{remote_path.rstrip('/')}/{entry.name}",
                size=entry.stat().st_size,
                directory=entry.is_dir(),
            )
            for entry in host.iterdir()
        ]
