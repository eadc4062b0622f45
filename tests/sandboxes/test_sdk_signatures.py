"""Every SDK call the adapters make (as recorded by the fakes) must bind to the real SDK.

If Modal or Daytona rename a parameter, drop a method or reshape a result type, these tests
fail even though the fakes would keep the adapters' own tests green.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sandboxes import SandboxOptions
from sandboxes.daytona_backend import _GONE, _HIBERNATED, _NEEDS_START, DaytonaSandbox
from sandboxes.modal_backend import ModalSandbox
from tests.sandboxes.fakes import Call, FakeDaytona, FakeModal, MemoryStateStore

pytestmark = pytest.mark.anyio


def bind(real: Callable[..., Any], call: Call) -> None:
    """Bind ``call`` to ``real``'s signature, standing in for an unbound ``self``/``cls``."""
    signature = inspect.signature(real)
    params = list(signature.parameters.values())
    assert params, f"{call.name}: the real SDK callable takes no parameters"
    assert not (params[0].kind is inspect.Parameter.VAR_POSITIONAL and len(params) == 2), (
        f"{call.name}: the real signature is opaque ({signature})"
    )
    lead = (None,) if params[0].name in ("self", "cls") else ()
    try:
        signature.bind(*lead, *call.args, **call.kwargs)
    except TypeError as exc:
        pytest.fail(f"{call.name}{call.args}{call.kwargs} does not fit the real {signature}: {exc}")


def test_bind_catches_a_drifted_call() -> None:
    import modal
    from modal.sandbox.sandbox import SandboxFilesystem

    bind(modal.Sandbox.exec, Call("Sandbox.exec", ("bash", "-lc", "ls"), {"workdir": "/w"}))
    with pytest.raises(pytest.fail.Exception, match="cwd"):
        bind(modal.Sandbox.exec, Call("Sandbox.exec", ("bash",), {"cwd": "/w"}))
    with pytest.raises(pytest.fail.Exception, match="remote_path"):
        bind(SandboxFilesystem.write_bytes, Call("write_bytes", ("/w/a.txt",), {}))


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
        "StreamReader.read": StreamReader.read,
        "ContainerProcess.wait": ContainerProcess.wait,
        "SandboxFilesystem.read_bytes": SandboxFilesystem.read_bytes,
        "SandboxFilesystem.write_bytes": SandboxFilesystem.write_bytes,
        "SandboxFilesystem.list_files": SandboxFilesystem.list_files,
    }


SYNC_ONLY_MODAL = {"Image.debian_slim", "Image.apt_install"}


async def run_modal_scenario(root: Path) -> FakeModal:
    fake = FakeModal(root)
    state = MemoryStateStore()
    sandbox = ModalSandbox("alice", state=state, sdk=fake)
    await sandbox.write_file("a/b.txt", b"x")
    await sandbox.exec("cat a/b.txt", cwd="a", timeout=5, env={"K": "v"})
    await sandbox.list_dir("a")
    await sandbox.hibernate()
    await sandbox.read_file("a/b.txt")
    fake.fail_from_id = True
    await sandbox.hibernate()
    await sandbox.resume()
    return fake


async def test_modal_calls_fit_the_real_sdk(tmp_path: Path) -> None:
    fake = await run_modal_scenario(tmp_path)
    targets = modal_targets()
    assert {call.name for call in fake.calls} == set(targets)
    for call in fake.calls:
        bind(targets[call.name], call)
    for name, real in targets.items():
        assert name in SYNC_ONLY_MODAL or hasattr(real, "aio"), f"{name} has no .aio"


def test_modal_result_types_have_what_the_adapter_reads() -> None:
    import modal
    import modal.exception
    import modal.types
    from modal.container_process import ContainerProcess

    assert {"name", "size"} <= set(modal.types.FileInfo.__dataclass_fields__)
    assert callable(modal.types.FileInfo.is_dir)
    assert isinstance(modal.Image.object_id, property)
    assert isinstance(ContainerProcess.stdout, property)
    assert isinstance(ContainerProcess.stderr, property)


def test_modal_exceptions_exist_with_the_same_hierarchy(tmp_path: Path) -> None:
    import modal.exception

    fake = vars(FakeModal(tmp_path).exception)
    real = {name: getattr(modal.exception, name) for name in fake}
    for name, fake_cls in fake.items():
        for other, other_fake in fake.items():
            relation = issubclass(fake_cls, other_fake)
            assert relation == issubclass(real[name], real[other]), (name, other)


def daytona_targets() -> dict[str, Any]:
    import daytona

    process = typing.get_type_hints(daytona.Sandbox.process.fget)["return"]
    filesystem = typing.get_type_hints(daytona.Sandbox.fs.fget)["return"]
    return {
        "Daytona": daytona.Daytona.__init__,
        "Daytona.list": daytona.Daytona.list,
        "Daytona.create": daytona.Daytona.create,
        "Sandbox.start": daytona.Sandbox.start,
        "Sandbox.stop": daytona.Sandbox.stop,
        "Sandbox.refresh_data": daytona.Sandbox.refresh_data,
        "Sandbox.get_work_dir": daytona.Sandbox.get_work_dir,
        "Process.exec": process.exec,
        "FileSystem.upload_file": filesystem.upload_file,
        "FileSystem.download_file": filesystem.download_file,
        "FileSystem.list_files": filesystem.list_files,
    }


DAYTONA_DATA = (
    "DaytonaConfig",
    "ListSandboxesQuery",
    "CreateSandboxFromImageParams",
    "CreateSandboxFromSnapshotParams",
)


async def run_daytona_scenario(root: Path) -> FakeDaytona:
    fake = FakeDaytona(root)
    options = SandboxOptions(daytona_api_key="k", daytona_api_url="http://x", daytona_target="us")
    sandbox = DaytonaSandbox("alice", options=options, sdk=fake)
    await sandbox.write_file("a/b.txt", b"x")
    await sandbox.exec("cat a/b.txt", cwd="a", timeout=5, env={"K": "v"})
    await sandbox.read_file("a/b.txt")
    await sandbox.list_dir("a")
    await sandbox.status()
    await sandbox.hibernate()
    await DaytonaSandbox("alice", options=options, sdk=fake).resume()
    image = SandboxOptions(daytona_image="debian:12", daytona_workdir="/home/daytona")
    await DaytonaSandbox("bob", options=image, sdk=fake).exec("true")
    return fake


async def test_daytona_calls_fit_the_real_sdk(tmp_path: Path) -> None:
    import daytona

    fake = await run_daytona_scenario(tmp_path)
    targets = daytona_targets()
    assert {call.name for call in fake.calls} == set(targets) | set(DAYTONA_DATA)
    for call in fake.calls:
        if call.name in DAYTONA_DATA:
            getattr(daytona, call.name)(*call.args, **call.kwargs)
        else:
            bind(targets[call.name], call)


def test_daytona_result_types_have_what_the_adapter_reads() -> None:
    import daytona

    process = typing.get_type_hints(daytona.Sandbox.process.fget)["return"]
    filesystem = typing.get_type_hints(daytona.Sandbox.fs.fget)["return"]
    response = typing.get_type_hints(process.exec)["return"]
    (file_info,) = typing.get_args(typing.get_type_hints(filesystem.list_files)["return"])
    assert {"exit_code", "result"} <= set(response.model_fields)
    assert {"name", "is_dir", "size"} <= set(file_info.model_fields)
    assert {"state", "labels", "id"} <= set(daytona.Sandbox.model_fields)
    assert {state.value for state in daytona.SandboxState} >= _HIBERNATED | _GONE | _NEEDS_START


def test_daytona_exceptions_exist_with_the_same_hierarchy() -> None:
    import daytona

    names = ("DaytonaError", "DaytonaNotFoundError", "DaytonaTimeoutError")
    for name in names:
        real, fake = getattr(daytona, name), getattr(FakeDaytona, name)
        assert issubclass(real, daytona.DaytonaError)
        assert issubclass(fake, FakeDaytona.DaytonaError)
    assert issubclass(daytona.DaytonaFileNotFoundError, daytona.DaytonaNotFoundError)
    assert issubclass(daytona.DaytonaProcessExecutionTimeoutError, daytona.DaytonaTimeoutError)
