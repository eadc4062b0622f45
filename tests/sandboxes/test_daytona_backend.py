"""DaytonaSandbox against the fake ``daytona`` SDK: label lookup, start, stop and exec."""

from __future__ import annotations

import pytest

from sandboxes import SandboxError, SandboxOptions
from sandboxes.daytona_backend import DaytonaSandbox
from tests.sandboxes.conftest import Backend
from tests.sandboxes.fake_daytona import FakeDaytona

pytestmark = pytest.mark.anyio


def fake_of(backend: Backend) -> FakeDaytona:
    assert isinstance(backend.fake, FakeDaytona)
    return backend.fake


async def test_first_use_looks_up_by_label_then_creates(fake_daytona: Backend) -> None:
    fake = fake_of(fake_daytona)
    options = SandboxOptions(
        daytona_api_key="k",
        daytona_api_url="https://daytona.example/api",
        daytona_target="eu",
        daytona_auto_stop_interval=5,
        daytona_auto_archive_interval=60,
    )
    result = await fake_daytona.make("alice", options=options).exec("echo hi", timeout=2.5)
    assert result.stdout == "hi\n"
    assert fake.recorder.names() == [
        "DaytonaConfig",
        "Daytona",
        "ListSandboxesQuery",
        "Daytona.list",
        "CreateSandboxFromSnapshotParams",
        "Daytona.create",
        "Sandbox.get_work_dir",
        "Process.exec",
    ]
    config, query, params = (
        fake.recorder.named(name)[0].kwargs
        for name in ("DaytonaConfig", "ListSandboxesQuery", "CreateSandboxFromSnapshotParams")
    )
    assert config == {"api_key": "k", "api_url": "https://daytona.example/api", "target": "eu"}
    assert query == {"labels": {"iris-user": "alice"}}
    assert params == {
        "snapshot": None,
        "labels": {"iris-user": "alice"},
        "auto_stop_interval": 5,
        "auto_archive_interval": 60,
    }
    exec_call = fake.recorder.named("Process.exec")[0]
    assert exec_call.args == ("bash -lc 'echo hi'",)
    assert exec_call.kwargs == {"cwd": "/home/daytona", "env": None, "timeout": 3}


async def test_image_option_creates_from_an_image(fake_daytona: Backend) -> None:
    fake = fake_of(fake_daytona)
    options = SandboxOptions(daytona_image="python:3.12-slim", daytona_workdir="/home/daytona")
    await fake_daytona.make(options=options).exec("true")
    assert fake.recorder.named("CreateSandboxFromImageParams")[0].kwargs["image"] == (
        "python:3.12-slim"
    )
    assert "Sandbox.get_work_dir" not in fake.recorder.names()


async def test_existing_labelled_sandbox_is_found_not_recreated(fake_daytona: Backend) -> None:
    fake = fake_of(fake_daytona)
    await fake_daytona.make("alice").write_file("a.txt", b"1")
    await fake_daytona.make("bob").write_file("b.txt", b"2")
    fake.recorder.clear()
    assert await fake_daytona.make("alice").read_file("a.txt") == b"1"
    assert "Daytona.create" not in fake.recorder.names()
    assert [len(fake.for_user(user)) for user in ("alice", "bob")] == [1, 1]


@pytest.mark.parametrize("state", ["stopped", "archived", "paused"])
async def test_a_sleeping_sandbox_is_started(fake_daytona: Backend, state: str) -> None:
    fake = fake_of(fake_daytona)
    await fake_daytona.make().write_file("a.txt", b"1")
    (record,) = fake.for_user("alice")
    record.state = state
    sandbox = fake_daytona.make()
    assert await sandbox.status() == "hibernated"
    fake.recorder.clear()
    assert (await sandbox.exec("cat a.txt")).stdout == "1"
    assert fake.recorder.names()[:2] == ["Sandbox.start", "Sandbox.get_work_dir"]
    assert record.history == [f"start from {state}"]
    assert await sandbox.status() == "running"


async def test_hibernate_stops_once(fake_daytona: Backend) -> None:
    fake = fake_of(fake_daytona)
    sandbox = fake_daytona.make()
    await sandbox.exec("true")
    await sandbox.hibernate()
    await sandbox.hibernate()
    await fake_daytona.make().hibernate()
    assert fake.recorder.names().count("Sandbox.stop") == 1
    (record,) = fake.for_user("alice")
    assert record.state == "stopped"


async def test_a_destroyed_sandbox_is_replaced(fake_daytona: Backend) -> None:
    fake = fake_of(fake_daytona)
    await fake_daytona.make().exec("true")
    (old,) = fake.for_user("alice")
    old.state = "destroyed"
    sandbox = fake_daytona.make()
    assert await sandbox.status() == "absent"
    await sandbox.exec("true")
    assert [r.state for r in fake.for_user("alice")] == ["destroyed", "started"]


async def test_env_and_quoting_reach_the_command(fake_daytona: Backend) -> None:
    sandbox = fake_daytona.make()
    result = await sandbox.exec("echo \"$A\" 'it''s' && echo err >&2", env={"A": "x y"})
    assert result.stdout == "x y its\nerr\n"


async def test_client_errors_become_sandbox_errors(tmp_path) -> None:
    fake = FakeDaytona(tmp_path)
    with pytest.raises(SandboxError, match="Daytona client"):
        DaytonaSandbox("alice", options=SandboxOptions(daytona_api_key=""), sdk=fake)
    sandbox = DaytonaSandbox("alice", sdk=fake)
    await sandbox.exec("true")
    fake.for_user("alice")[0].state = "stopped"
    with pytest.raises(SandboxError, match="daytona exec failed"):
        await sandbox.exec("true")


async def test_a_handle_idle_for_long_is_looked_up_again(fake_daytona: Backend) -> None:
    fake = fake_of(fake_daytona)
    now = [0.0]
    sandbox = DaytonaSandbox("alice", sdk=fake, clock=lambda: now[0])
    await sandbox.write_file("a.txt", b"1")
    fake.for_user("alice")[0].state = "stopped"
    now[0] += 61
    assert (await sandbox.exec("cat a.txt")).stdout == "1"
    assert fake.recorder.names().count("Daytona.list") == 2
    assert fake.for_user("alice")[0].history == ["start from stopped"]
