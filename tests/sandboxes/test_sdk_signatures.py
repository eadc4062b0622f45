"""The fakes stay as strict as the installed SDKs.

Every call a fake receives is bound to the real SDK's signature as it is made (``Recorder``), so
every adapter test is also a signature test. These tests check the binding itself, the result
types and states the adapters read, and that the fakes raise the SDKs' own exception classes.
"""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from iris_testing.sandboxes.fake_common import Call, bind
from iris_testing.sandboxes.fake_daytona import daytona_targets, getter_return
from iris_testing.sandboxes.fake_modal import modal_targets
from sandboxes import SandboxOptions
from sandboxes.daytona_client import _GONE, _HIBERNATED, _SETTLING, _STARTING, _WAKE
from tests.sandboxes.fakes import FakeDaytona, FakeModal


def test_bind_catches_a_drifted_call() -> None:
    import modal
    from modal.sandbox.sandbox import SandboxFilesystem

    bind(modal.Sandbox.exec, Call("Sandbox.exec", ("bash", "-c", "ls"), {"workdir": "/w"}))
    with pytest.raises(TypeError, match="cwd"):
        bind(modal.Sandbox.exec, Call("Sandbox.exec", ("bash",), {"cwd": "/w"}))
    with pytest.raises(TypeError, match="remote_path"):
        bind(SandboxFilesystem.write_bytes, Call("write_bytes", ("/w/a.txt",), {}))


@pytest.mark.anyio
async def test_the_fakes_refuse_what_the_real_sdk_refuses(tmp_path: Path) -> None:
    modal_fake = FakeModal(tmp_path / "m")
    with pytest.raises(TypeError, match="does not fit the real"):
        await modal_fake.Sandbox.from_name.aio("app", "name", wait=True)
    with pytest.raises(TypeError, match="does not fit the real"):
        modal_fake.Image.debian_slim("3.11", True, "extra")
    daytona_fake = FakeDaytona(tmp_path / "d")
    with pytest.raises(TypeError, match="does not fit the real"):
        daytona_fake.Daytona().create(None, timeout=60, on_logs=print)  # not a real parameter
    with pytest.raises(Exception, match="validation error"):
        daytona_fake.DaytonaConfig(api_key=5)


def test_every_fake_target_is_a_real_sdk_callable() -> None:
    for targets in (modal_targets(), daytona_targets()):
        for name, real in targets.items():
            assert callable(real), name


def test_modal_result_types_have_what_the_adapter_reads() -> None:
    import modal
    import modal.types
    from modal.container_process import ContainerProcess

    assert {"name", "size"} <= set(modal.types.FileInfo.__dataclass_fields__)
    assert callable(modal.types.FileInfo.is_dir)
    assert isinstance(modal.Image.object_id, property)
    assert isinstance(ContainerProcess.stdout, property)
    assert isinstance(ContainerProcess.stderr, property)
    for name in ("snapshot_filesystem", "terminate", "exec"):
        assert hasattr(getattr(modal.Sandbox, name), "aio"), name


def test_the_fakes_raise_the_sdks_own_exception_classes(tmp_path: Path) -> None:
    import daytona
    import modal.exception

    assert FakeModal(tmp_path).exception is modal.exception
    for name in ("DaytonaError", "DaytonaNotFoundError", "DaytonaFileNotFoundError",
                 "DaytonaTimeoutError", "DaytonaConnectionError", "DaytonaRateLimitError"):
        assert getattr(FakeDaytona, name) is getattr(daytona, name), name


def test_daytona_result_types_and_states_are_the_real_ones() -> None:
    import daytona

    process = getter_return(daytona.Sandbox, "process")
    filesystem = getter_return(daytona.Sandbox, "fs")
    response = typing.get_type_hints(process.exec)["return"]
    (file_info,) = typing.get_args(typing.get_type_hints(filesystem.list_files)["return"])
    assert {"exit_code", "result"} <= set(response.model_fields)
    assert {"name", "is_dir", "size"} <= set(file_info.model_fields)
    assert {"state", "labels", "id", "recoverable", "error_reason"} <= set(
        daytona.Sandbox.model_fields
    )
    real = {state.value for state in daytona.SandboxState}
    handled = _GONE | _HIBERNATED | _SETTLING | _STARTING | _WAKE | {
        "started", "error", "build_failed"
    }
    assert handled == real, "a Daytona state the adapter does not handle (or no longer exists)"


def test_the_real_daytona_config_takes_what_the_adapter_passes() -> None:
    import daytona

    from sandboxes.daytona_client import api_url

    options = SandboxOptions(daytona_api_key="k", daytona_target="eu")
    config = daytona.DaytonaConfig(api_key="k", api_url=api_url(options), target="eu")
    assert config.api_url  # so the client never reads the deprecated server_url
