"""A fake synchronous ``daytona`` SDK: labelled sandboxes with states, process.exec and fs.

Configuration and query objects are the real SDK's pydantic models, errors are the real
``daytona`` classes, and every call is bound to the real signature as it is made. What the SDK
source (0.226) shows, the fake does the same way:

- ``Daytona.create`` waits for the new sandbox to start; a build that fails raises
  ``DaytonaError("... entered error state: build_failed ...")`` and leaves a ``build_failed``
  sandbox behind.
- ``wait_for_sandbox_start`` / ``wait_for_sandbox_stop`` end in ``DaytonaError`` when the sandbox
  reaches ``error`` or ``build_failed``, and in ``DaytonaTimeoutError`` when it never settles.
- ``recover()`` is the call for an ``error`` state that Daytona marks ``recoverable``.
- A missing file is ``DaytonaFileNotFoundError`` (code ``FILE_NOT_FOUND`` from the daemon);
  a sandbox that no longer exists is a plain ``DaytonaNotFoundError`` (404 from the API or proxy).
- ``Daytona.get`` of a deleted sandbox raises ``DaytonaNotFoundError``.

What the source cannot show (the server decides), the fake assumes and says so here:

- The toolbox of a sandbox that is not started answers 400 (``DaytonaBadRequestError``) from
  the proxy; of one that was deleted, 404.
- ``start()`` refuses ``error`` and ``build_failed`` sandboxes (``DaytonaBadRequestError``).
- A command past its timeout fails with ``DaytonaProcessExecutionTimeoutError`` and returns no
  output; ``process.exec`` runs the command with ``sh -c``.
- Sessions (``create_session`` … ``delete_session``) follow the daemon's source
  (apps/daemon/pkg/session): a session is a shell in its own process group; a command's exit
  code is unknown (``None``) until it ends, its log holds stdout and stderr as far as they got,
  and deleting the session ends its process group (TERM, then KILL) and removes the logs. The
  fake starts each command as ``bash -c`` in the work dir (the daemon writes it to the
  session's shell), and, having no chroot, maps the machine paths it knows in the command text
  (the work dir and ``/tmp/iris-home``) into the machine's directory.
- ``hold_start`` (an Event, None by default) holds each ``create_session`` until it is set,
  with ``starting`` set while it waits: a command caught in its starting phase, for tests of
  what happens to a stop that comes then.
- Transitional states move one step each time the sandbox is looked at (``refresh_data``) or
  waited for; no real time passes.
"""

from __future__ import annotations

import posixpath
import threading
import typing
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from daytona.common import errors

from iris_testing.sandboxes.fake_common import Container, Recorder, next_id
from iris_testing.sandboxes.fake_daytona_sessions import Sessions
from iris_testing.sandboxes.fake_daytona_snapshots import FakeSnapshots, SnapshotRecord
from iris_testing.waiting import wait_until

WORK_DIR = "/home/daytona"
PROXY = errors.SOURCE_PROXY
DAEMON = errors.SOURCE_DAEMON
DATA = (
    "DaytonaConfig", "ListSandboxesQuery", "CreateSandboxFromImageParams",
    "CreateSandboxFromSnapshotParams", "SessionExecuteRequest", "CreateSnapshotParams",
)


def getter_return(owner: type, name: str) -> Any:
    """The annotated return type of the property ``owner.name`` (read through ``getattr``:
    mypy types a property read on its class as the bare getter, which has no ``fget``)."""
    prop: property = getattr(owner, name)
    return typing.get_type_hints(prop.fget)["return"]


def daytona_targets() -> dict[str, Any]:
    import daytona

    process = getter_return(daytona.Sandbox, "process")
    filesystem = getter_return(daytona.Sandbox, "fs")
    targets = {name: getattr(daytona, name) for name in DATA}
    from daytona._sync.snapshot import SnapshotService

    targets.update({
        "SnapshotService.get": SnapshotService.get,
        "SnapshotService.create": SnapshotService.create,
        "Daytona": daytona.Daytona.__init__,
        "Daytona.list": daytona.Daytona.list,
        "Daytona.get": daytona.Daytona.get,
        "Daytona.create": daytona.Daytona.create,
        "Sandbox.start": daytona.Sandbox.start,
        "Sandbox.recover": daytona.Sandbox.recover,
        "Sandbox.stop": daytona.Sandbox.stop,
        "Sandbox.delete": daytona.Sandbox.delete,
        "Sandbox.wait_for_sandbox_start": daytona.Sandbox.wait_for_sandbox_start,
        "Sandbox.wait_for_sandbox_stop": daytona.Sandbox.wait_for_sandbox_stop,
        "Sandbox.refresh_data": daytona.Sandbox.refresh_data,
        "Sandbox.get_work_dir": daytona.Sandbox.get_work_dir,
        "Process.exec": process.exec,
        "Process.create_session": process.create_session,
        "Process.execute_session_command": process.execute_session_command,
        "Process.get_session_command": process.get_session_command,
        "Process.get_session_command_logs": process.get_session_command_logs,
        "Process.delete_session": process.delete_session,
        "FileSystem.upload_file": filesystem.upload_file,
        "FileSystem.download_file": filesystem.download_file,
        "FileSystem.list_files": filesystem.list_files,
    })
    return targets


@dataclass
class SandboxRecord:
    """The server side of one sandbox; handles returned by list/get/create copy its state."""

    id: str
    labels: dict[str, str]
    container: Container
    state: str = "started"
    recoverable: bool = False
    error_reason: str | None = None
    then: list[str] = field(default_factory=list)
    """States a transitional state goes through next, one per look."""
    params: Any = None
    history: list[str] = field(default_factory=list)
    sessions: Sessions | None = None
    """The toolbox's sessions, opened on first use."""

    def step(self) -> None:
        if self.then:
            self.state = self.then.pop(0)


class FakeDaytona:
    """Offers the ``daytona`` module attributes the adapter uses."""

    DaytonaError = errors.DaytonaError
    DaytonaNotFoundError = errors.DaytonaNotFoundError
    DaytonaFileNotFoundError = errors.DaytonaFileNotFoundError
    DaytonaTimeoutError = errors.DaytonaTimeoutError
    DaytonaConnectionError = errors.DaytonaConnectionError
    DaytonaRateLimitError = errors.DaytonaRateLimitError

    def __init__(self, root: Path) -> None:
        import daytona

        self.Image = daytona.Image  # the SDK's own builder: it only writes a Dockerfile
        self.snapshots: dict[str, SnapshotRecord] = {}
        self.snapshot_build_fails = False
        self.root = root
        self.recorder = Recorder(targets=daytona_targets())
        self.records: dict[str, SandboxRecord] = {}
        self.clients = 0
        self.build_fails = False
        self.hold_start: threading.Event | None = None
        self.starting = threading.Event()

    @property
    def calls(self) -> list[Any]:
        return self.recorder.calls

    def for_user(self, user_id: str) -> list[SandboxRecord]:
        return [r for r in self.records.values() if r.labels.get("iris-user") == user_id]

    def purge(self, sandbox_id: str) -> None:
        """Daytona forgets a destroyed sandbox entirely (and nothing runs in it any more)."""
        sessions = self.records.pop(sandbox_id).sessions
        if sessions is not None:
            sessions.end_all()

    def _data(self, name: str, kwargs: dict[str, Any]) -> Any:
        self.recorder.record(name, **kwargs)
        return self.recorder.targets[name](**kwargs)

    def DaytonaConfig(self, **kwargs: Any) -> Any:
        return self._data("DaytonaConfig", kwargs)

    def ListSandboxesQuery(self, **kwargs: Any) -> Any:
        return self._data("ListSandboxesQuery", kwargs)

    def CreateSandboxFromImageParams(self, **kwargs: Any) -> Any:
        return self._data("CreateSandboxFromImageParams", kwargs)

    def CreateSandboxFromSnapshotParams(self, **kwargs: Any) -> Any:
        return self._data("CreateSandboxFromSnapshotParams", kwargs)

    def SessionExecuteRequest(self, **kwargs: Any) -> Any:
        return self._data("SessionExecuteRequest", kwargs)

    def CreateSnapshotParams(self, **kwargs: Any) -> Any:
        return self._data("CreateSnapshotParams", kwargs)

    def Daytona(self, config: Any = None) -> FakeDaytonaClient:
        self.recorder.record("Daytona", config)
        if config is not None and config.api_key == "":
            raise errors.DaytonaAuthenticationError("Authentication credentials not found.")
        self.clients += 1
        return FakeDaytonaClient(self)


def _not_found(what: str, source: str = errors.SOURCE_API) -> errors.DaytonaNotFoundError:
    return errors.DaytonaNotFoundError(f"{what} not found", status_code=404, source=source)


class FakeDaytonaClient:
    def __init__(self, fake: FakeDaytona) -> None:
        self._fake = fake
        self.snapshot = FakeSnapshots(fake)

    def list(self, query: Any = None, request_timeout: float | None = None) -> Any:
        self._fake.recorder.record("Daytona.list", query, request_timeout=request_timeout)
        wanted = (query.labels if query is not None else None) or {}
        for record in list(self._fake.records.values()):
            if all(record.labels.get(k) == v for k, v in wanted.items()):
                yield FakeDaytonaSandbox(self._fake, record)

    def get(self, sandbox_id_or_name: str, request_timeout: float | None = None) -> Any:
        self._fake.recorder.record("Daytona.get", sandbox_id_or_name,
                                   request_timeout=request_timeout)
        record = self._fake.records.get(sandbox_id_or_name)
        if record is None:
            raise _not_found(f"Sandbox {sandbox_id_or_name}")
        return FakeDaytonaSandbox(self._fake, record)

    def create(self, params: Any = None, *, timeout: float = 60, **kwargs: Any) -> Any:
        self._fake.recorder.record("Daytona.create", params, timeout=timeout, **kwargs)
        sandbox_id = next_id("dt")
        container = Container(self._fake.root / "daytona" / sandbox_id, WORK_DIR)
        container.host(WORK_DIR).mkdir(parents=True)
        record = SandboxRecord(sandbox_id, dict(params.labels or {}), container, params=params)
        self._fake.records[sandbox_id] = record
        if self._fake.build_fails:
            record.state, record.error_reason = "build_failed", "Dockerfile build failed"
            raise errors.DaytonaError(
                f"Failure during waiting for sandbox to start: Sandbox {sandbox_id} entered "
                f"error state: build_failed, error reason: {record.error_reason}"
            )
        return FakeDaytonaSandbox(self._fake, record)


class FakeDaytonaSandbox:
    def __init__(self, fake: FakeDaytona, record: SandboxRecord) -> None:
        self._fake = fake
        self._record = record
        self.id = record.id
        self.labels = dict(record.labels)
        self.state = record.state
        self.recoverable = record.recoverable
        self.error_reason = record.error_reason
        self.process = FakeProcess(fake, record)
        self.fs = FakeFileSystem(fake, record)

    def _sync(self) -> None:
        self.state = self._record.state
        self.recoverable = self._record.recoverable
        self.error_reason = self._record.error_reason

    def _gone(self) -> bool:
        return self._record.id not in self._fake.records

    def start(self, timeout: float | None = 60) -> None:
        self._fake.recorder.record("Sandbox.start", timeout=timeout)
        if self._gone():
            raise _not_found(f"Sandbox {self.id}")
        record = self._record
        if record.state in ("error", "build_failed"):
            raise errors.DaytonaBadRequestError(
                f"Failed to start sandbox: sandbox is in state {record.state}", status_code=400
            )
        record.history.append(f"start from {record.state}")
        record.state = "started"
        self._sync()

    def recover(self, timeout: float | None = 60) -> None:
        self._fake.recorder.record("Sandbox.recover", timeout=timeout)
        record = self._record
        if record.state != "error" or not record.recoverable:
            raise errors.DaytonaBadRequestError(
                "Failed to recover sandbox: sandbox is not in a recoverable error state",
                status_code=400,
            )
        record.history.append("recover from error")
        record.state, record.error_reason = "started", None
        self._sync()

    def stop(self, timeout: float | None = 60, force: bool = False) -> None:
        self._fake.recorder.record("Sandbox.stop", timeout=timeout, force=force)
        if self._record.state != "started":
            raise errors.DaytonaBadRequestError(
                f"Failed to stop sandbox: sandbox is {self._record.state}", status_code=400
            )
        self._record.state = "stopped"
        if self._record.sessions is not None:
            self._record.sessions.end_all()  # a stopped sandbox runs nothing
        self._sync()

    def delete(self, timeout: float | None = 60, wait: bool = False) -> None:
        self._fake.recorder.record("Sandbox.delete", timeout=timeout, wait=wait)
        self._record.state = "destroyed"
        if self._record.sessions is not None:
            self._record.sessions.end_all()
        self._sync()

    def _wait(self, targets: tuple[str, ...]) -> None:
        record = self._record
        while record.state not in targets:
            if record.state in ("error", "build_failed"):
                self._sync()
                raise errors.DaytonaError(
                    f"Sandbox {self.id} entered error state: {record.state}, error reason: "
                    f"{record.error_reason}"
                )
            if not record.then:
                raise errors.DaytonaTimeoutError(
                    f"Sandbox {self.id} did not reach {targets} (still {record.state})"
                )
            record.step()
        self._sync()

    def wait_for_sandbox_start(self, timeout: float | None = 60) -> None:
        self._fake.recorder.record("Sandbox.wait_for_sandbox_start", timeout=timeout)
        self._wait(("started",))

    def wait_for_sandbox_stop(self, timeout: float | None = 60) -> None:
        self._fake.recorder.record("Sandbox.wait_for_sandbox_stop", timeout=timeout)
        self._wait(("stopped", "destroyed"))

    def refresh_data(self, request_timeout: float | None = None) -> None:
        self._fake.recorder.record("Sandbox.refresh_data", request_timeout=request_timeout)
        if self._gone():
            raise _not_found(f"Sandbox {self.id}")
        self._record.step()
        self._sync()

    def get_work_dir(self) -> str:
        self._fake.recorder.record("Sandbox.get_work_dir")
        _toolbox_path(self._fake, self._record, ".")
        return WORK_DIR


def _toolbox_path(fake: FakeDaytona, record: SandboxRecord, path: str) -> Path:
    """The toolbox answers only for a started sandbox (through Daytona's proxy)."""
    if record.id not in fake.records or record.state in ("destroyed", "destroying"):
        raise _not_found(f"Sandbox {record.id}", PROXY)
    if record.state != "started":
        raise errors.DaytonaBadRequestError(
            f"sandbox {record.id} is {record.state}; the toolbox is unreachable",
            status_code=400, source=PROXY,
        )
    return record.container.host(posixpath.join(WORK_DIR, path))


def _file_not_found(path: str) -> errors.DaytonaFileNotFoundError:
    return errors.DaytonaFileNotFoundError(
        f"file not found: {path}", status_code=404, code="FILE_NOT_FOUND", source=DAEMON
    )


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
        workdir = _toolbox_path(self._fake, self._record, cwd or ".")
        container = self._record.container
        output, code = container.run_blocking(
            ["sh", "-c", command], workdir, container.env(env), timeout
        )
        if code is None:
            raise errors.DaytonaProcessExecutionTimeoutError(
                f"Failed to execute command: command timed out after {timeout}s",
                status_code=408, code="PROCESS_EXECUTION_TIMEOUT", source=DAEMON,
            )
        return SimpleNamespace(exit_code=code, result=output.decode())

    def _sessions(self) -> Sessions:
        _toolbox_path(self._fake, self._record, ".")
        record = self._record
        if record.sessions is None:
            root = self._fake.root / "sessions" / record.id
            record.sessions = Sessions(root, record.container, WORK_DIR)
        return record.sessions

    def create_session(self, session_id: str, request_timeout: float | None = None) -> None:
        self._fake.recorder.record("Process.create_session", session_id,
                                   request_timeout=request_timeout)
        hold = self._fake.hold_start
        if hold is not None:
            self._fake.starting.set()
            # short sleeps, not a timed wait (see daytona_exec._pause)
            wait_until(hold.is_set, "the test to let the sandbox session start")
        self._sessions().create(session_id)

    def execute_session_command(
        self, session_id: str, req: Any, timeout: int | None = None
    ) -> Any:
        self._fake.recorder.record("Process.execute_session_command", session_id, req,
                                   timeout=timeout)
        return self._sessions().execute(session_id, req)

    def get_session_command(
        self, session_id: str, command_id: str, request_timeout: float | None = None
    ) -> Any:
        self._fake.recorder.record("Process.get_session_command", session_id, command_id,
                                   request_timeout=request_timeout)
        return self._sessions().command(session_id, command_id)

    def get_session_command_logs(
        self, session_id: str, command_id: str, request_timeout: float | None = None
    ) -> Any:
        self._fake.recorder.record("Process.get_session_command_logs", session_id, command_id,
                                   request_timeout=request_timeout)
        return self._sessions().logs(session_id, command_id)

    def delete_session(self, session_id: str, request_timeout: float | None = None) -> None:
        self._fake.recorder.record("Process.delete_session", session_id,
                                   request_timeout=request_timeout)
        self._sessions().delete(session_id)


class FakeFileSystem:
    """Relative paths resolve against the work dir. An upload creates missing parent
    directories, as the daemon's ``/files/bulk-upload`` (the endpoint ``upload_file`` posts
    to) does with ``os.MkdirAll`` (apps/daemon/pkg/toolbox/fs/upload_files.go, its first and
    latest versions); a parent that is a file fails the upload with a 400, which the SDK
    raises as a plain ``DaytonaError`` (filesystem.py ``upload_files``)."""

    def __init__(self, fake: FakeDaytona, record: SandboxRecord) -> None:
        self._fake = fake
        self._record = record

    def upload_file(self, src: bytes, dst: str, timeout: int = 1800) -> None:
        self._fake.recorder.record("FileSystem.upload_file", src, dst, timeout=timeout)
        host = _toolbox_path(self._fake, self._record, dst)
        try:
            host.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise errors.DaytonaError(
                f"Failed to upload files: 400: {dst}: mkdir {posixpath.dirname(dst)}: not a "
                "directory", status_code=400,
            ) from None
        host.write_bytes(src)

    def download_file(self, *args: str) -> bytes:
        self._fake.recorder.record("FileSystem.download_file", *args)
        host = _toolbox_path(self._fake, self._record, args[0])
        if not host.is_file():
            raise _file_not_found(args[0])
        return host.read_bytes()

    def list_files(self, path: str, depth: int | None = None, **kwargs: Any) -> list[Any]:
        self._fake.recorder.record("FileSystem.list_files", path, depth=depth, **kwargs)
        host = _toolbox_path(self._fake, self._record, path)
        if not host.is_dir():
            raise _file_not_found(path)
        return [
            SimpleNamespace(name=e.name, is_dir=e.is_dir(), size=e.stat().st_size)
            for e in host.iterdir()
        ]
