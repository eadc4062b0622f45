"""A fake synchronous ``daytona`` SDK: labelled sandboxes with states, process.exec and fs."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.sandboxes.fake_common import Container, Recorder, next_id

WORK_DIR = "/home/daytona"


class DaytonaError(Exception):
    pass


class DaytonaNotFoundError(DaytonaError):
    pass


class DaytonaFileNotFoundError(DaytonaNotFoundError):
    pass


class DaytonaTimeoutError(DaytonaError):
    pass


class DaytonaProcessExecutionTimeoutError(DaytonaTimeoutError):
    pass


@dataclass
class SandboxRecord:
    """The server side of one sandbox; handles returned by list/create are snapshots of it."""

    id: str
    labels: dict[str, str]
    container: Container
    state: str = "started"
    params: Any = None
    history: list[str] = field(default_factory=list)


class FakeDaytona:
    """Offers the ``daytona`` module attributes the adapter uses."""

    DaytonaError = DaytonaError
    DaytonaNotFoundError = DaytonaNotFoundError
    DaytonaTimeoutError = DaytonaTimeoutError

    def __init__(self, root: Path) -> None:
        self.root = root
        self.recorder = Recorder()
        self.records: dict[str, SandboxRecord] = {}

    @property
    def calls(self) -> list[Any]:
        return self.recorder.calls

    def for_user(self, user_id: str) -> list[SandboxRecord]:
        return [r for r in self.records.values() if r.labels.get("iris-user") == user_id]

    def _data(self, name: str, kwargs: dict[str, Any]) -> SimpleNamespace:
        self.recorder.record(name, **kwargs)
        return SimpleNamespace(**kwargs)

    def DaytonaConfig(self, **kwargs: Any) -> SimpleNamespace:
        return self._data("DaytonaConfig", kwargs)

    def ListSandboxesQuery(self, **kwargs: Any) -> SimpleNamespace:
        return self._data("ListSandboxesQuery", kwargs)

    def CreateSandboxFromImageParams(self, **kwargs: Any) -> SimpleNamespace:
        return self._data("CreateSandboxFromImageParams", kwargs)

    def CreateSandboxFromSnapshotParams(self, **kwargs: Any) -> SimpleNamespace:
        return self._data("CreateSandboxFromSnapshotParams", kwargs)

    def Daytona(self, config: Any = None) -> FakeDaytonaClient:
        self.recorder.record("Daytona", config)
        if config is not None and config.api_key == "":
            raise DaytonaError("API key is required")
        return FakeDaytonaClient(self)


class FakeDaytonaClient:
    def __init__(self, fake: FakeDaytona) -> None:
        self._fake = fake

    def list(self, query: Any = None, request_timeout: float | None = None) -> Any:
        self._fake.recorder.record("Daytona.list", query, request_timeout=request_timeout)
        wanted = (query.labels if query is not None else None) or {}
        for record in list(self._fake.records.values()):
            if all(record.labels.get(k) == v for k, v in wanted.items()):
                yield FakeDaytonaSandbox(self._fake, record)

    def create(self, params: Any = None, *, timeout: float = 60, **kwargs: Any) -> Any:
        self._fake.recorder.record("Daytona.create", params, timeout=timeout, **kwargs)
        sandbox_id = next_id("dt")
        container = Container(self._fake.root / "daytona" / sandbox_id)
        container.host(WORK_DIR).mkdir(parents=True)
        record = SandboxRecord(sandbox_id, dict(params.labels or {}), container, params=params)
        self._fake.records[sandbox_id] = record
        return FakeDaytonaSandbox(self._fake, record)


class FakeDaytonaSandbox:
    def __init__(self, fake: FakeDaytona, record: SandboxRecord) -> None:
        self._fake = fake
        self._record = record
        self.id = record.id
        self.labels = dict(record.labels)
        self.state = record.state
        self.process = FakeProcess(fake, record)
        self.fs = FakeFileSystem(fake, record)

    def start(self, timeout: float | None = 60) -> None:
        self._fake.recorder.record("Sandbox.start", timeout=timeout)
        self._record.history.append(f"start from {self._record.state}")
        self._record.state = self.state = "started"

    def stop(self, timeout: float | None = 60, force: bool = False) -> None:
        self._fake.recorder.record("Sandbox.stop", timeout=timeout, force=force)
        if self._record.state != "started":
            raise DaytonaError(f"sandbox is {self._record.state}, not started")
        self._record.state = self.state = "stopped"

    def refresh_data(self, request_timeout: float | None = None) -> None:
        self._fake.recorder.record("Sandbox.refresh_data", request_timeout=request_timeout)
        self.state = self._record.state

    def get_work_dir(self) -> str:
        self._fake.recorder.record("Sandbox.get_work_dir")
        return WORK_DIR


def _toolbox_path(record: SandboxRecord, path: str) -> Path:
    if record.state != "started":
        raise DaytonaError(f"sandbox {record.id} is {record.state}; the toolbox is unreachable")
    return record.container.host(posixpath.join(WORK_DIR, path))


class FakeProcess:
    """``exec`` runs the command with ``sh -c`` and merges stderr into the result."""

    def __init__(self, fake: FakeDaytona, record: SandboxRecord) -> None:
        self._fake = fake
        self._record = record

    def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: int | None = None,
    ) -> Any:
        self._fake.recorder.record("Process.exec", command, cwd=cwd, env=env, timeout=timeout)
        workdir = _toolbox_path(self._record, cwd or ".")
        container = self._record.container
        output, code = container.run_blocking(
            ["sh", "-c", command], workdir, container.env(workdir, env), timeout
        )
        if code is None:
            raise DaytonaProcessExecutionTimeoutError(f"command timed out after {timeout}s")
        return SimpleNamespace(exit_code=code, result=output.decode())


class FakeFileSystem:
    """Relative paths resolve against the work dir; uploads need an existing parent."""

    def __init__(self, fake: FakeDaytona, record: SandboxRecord) -> None:
        self._fake = fake
        self._record = record

    def upload_file(self, src: bytes, dst: str, timeout: int = 1800) -> None:
        self._fake.recorder.record("FileSystem.upload_file", src, dst, timeout=timeout)
        host = _toolbox_path(self._record, dst)
        if not host.parent.is_dir():
            raise DaytonaError(f"parent directory of {dst} does not exist")
        host.write_bytes(src)

    def download_file(self, *args: str) -> bytes:
        self._fake.recorder.record("FileSystem.download_file", *args)
        host = _toolbox_path(self._record, args[0])
        if not host.is_file():
            raise DaytonaFileNotFoundError(f"{args[0]} not found")
        return host.read_bytes()

    def list_files(self, path: str, depth: int | None = None, **kwargs: Any) -> list[Any]:
        self._fake.recorder.record("FileSystem.list_files", path, depth=depth, **kwargs)
        host = _toolbox_path(self._record, path)
        if not host.is_dir():
            raise DaytonaFileNotFoundError(f"{path} not found")
        return [
            SimpleNamespace(name=e.name, is_dir=e.is_dir(), size=e.stat().st_size)
            for e in host.iterdir()
        ]
