"""ModalSandbox against the fake ``modal`` module: call sequences, snapshots and fallbacks."""

from __future__ import annotations

import logging

import pytest

from sandboxes import SandboxError, SandboxFileNotFound, SandboxOptions
from sandboxes.modal_backend import ModalSandbox
from tests.sandboxes.conftest import Backend
from tests.sandboxes.fake_modal import FakeModal

pytestmark = pytest.mark.anyio


def fake_of(backend: Backend) -> FakeModal:
    assert isinstance(backend.fake, FakeModal)
    return backend.fake


async def test_first_exec_creates_a_named_sandbox_then_execs(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    options = SandboxOptions(modal_timeout=900, modal_idle_timeout=120)
    result = await fake_modal.make("alice", options=options).exec("echo hi", cwd="", timeout=7.2)
    assert result.stdout == "hi\n"
    assert fake.recorder.names() == [
        "Sandbox.from_name",
        "App.lookup",
        "Image.debian_slim",
        "Image.apt_install",
        "Sandbox.create",
        "Sandbox.exec",
        "StreamReader.read",
        "StreamReader.read",
        "ContainerProcess.wait",
    ]
    assert fake.recorder.named("Sandbox.from_name")[0].args == ("iris-sandboxes", "iris-alice")
    lookup = fake.recorder.named("App.lookup")[0]
    assert lookup.args == ("iris-sandboxes",) and lookup.kwargs == {"create_if_missing": True}
    assert fake.recorder.named("Image.apt_install")[0].args == ("git", "curl")
    create = fake.recorder.named("Sandbox.create")[0]
    assert create.args == ()
    assert create.kwargs["name"] == "iris-alice"
    assert create.kwargs["tags"] == {"iris-user": "alice"}
    assert create.kwargs["image"].object_id == "im-base"
    assert (create.kwargs["timeout"], create.kwargs["idle_timeout"]) == (900, 120)
    assert create.kwargs["workdir"] == "/workspace"
    exec_call = fake.recorder.named("Sandbox.exec")[0]
    assert exec_call.args == ("bash", "-lc", "echo hi")
    assert exec_call.kwargs == {"workdir": "/workspace", "timeout": 8, "env": None}


async def test_later_calls_reuse_the_sandbox(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = fake_modal.make()
    await sandbox.exec("true")
    await sandbox.write_file("a/b.txt", b"x")
    await fake_modal.make().read_file("a/b.txt")
    assert fake.recorder.names().count("Sandbox.create") == 1
    assert len(fake.sandboxes) == 1
    paths = [c.args[-1] for c in fake.calls if c.name.startswith("SandboxFilesystem.")]
    assert paths == ["/workspace/a/b.txt", "/workspace/a/b.txt"]


async def test_configured_image_replaces_the_default(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    custom = fake.Image.debian_slim()
    fake.recorder.clear()
    await fake_modal.make(options=SandboxOptions(modal_image=custom)).exec("true")
    assert "Image.debian_slim" not in fake.recorder.names()
    assert fake.recorder.named("Sandbox.create")[0].kwargs["image"] is custom


async def test_hibernate_snapshots_stores_the_image_then_terminates(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = fake_modal.make("alice", options=SandboxOptions(modal_snapshot_ttl=None))
    await sandbox.write_file("keep.txt", b"kept")
    fake.recorder.clear()
    await sandbox.hibernate()
    assert fake.recorder.names() == ["Sandbox.snapshot_filesystem", "Sandbox.terminate"]
    assert fake.recorder.calls[0].kwargs == {"ttl": None}
    (image_id,) = fake.images
    assert fake_modal.state.get_sandbox_state("alice", "modal") == {"image_id": image_id}
    assert fake.sandboxes[0].terminated


async def test_resume_restores_from_the_snapshot(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = fake_modal.make()
    await sandbox.write_file("keep.txt", b"kept")
    await sandbox.hibernate()
    fake.recorder.clear()
    await sandbox.resume()
    (image_id,) = fake.images
    assert fake.recorder.names() == [
        "Sandbox.from_name",
        "App.lookup",
        "Image.from_id",
        "Sandbox.create",
    ]
    assert fake.recorder.named("Image.from_id")[0].args == (image_id,)
    assert fake.recorder.named("Sandbox.create")[0].kwargs["image"].object_id == image_id
    assert await sandbox.read_file("keep.txt") == b"kept"


@pytest.mark.parametrize("failure", ["fail_from_id", "fail_create_from_snapshot"])
async def test_failed_restore_falls_back_to_the_base_image(
    fake_modal: Backend, failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    fake = fake_of(fake_modal)
    sandbox = fake_modal.make()
    await sandbox.write_file("keep.txt", b"kept")
    await sandbox.hibernate()
    setattr(fake, failure, True)
    fake.recorder.clear()
    with caplog.at_level(logging.WARNING, logger="sandboxes.modal_backend"):
        result = await sandbox.exec("ls")
    assert result.exit_code == 0 and result.stdout == ""
    assert "restoring snapshot" in caplog.text and "iris-alice" in caplog.text
    images = [c.kwargs["image"].object_id for c in fake.recorder.named("Sandbox.create")]
    assert images[-1] == "im-base"
    assert await sandbox.status() == "running"
    with pytest.raises(SandboxFileNotFound):
        await sandbox.read_file("keep.txt")


async def test_a_sandbox_started_concurrently_elsewhere_is_adopted(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    await fake_modal.make().write_file("first.txt", b"1")
    fake.from_name_misses = 1
    fake.recorder.clear()
    late = fake_modal.make()
    assert await late.read_file("first.txt") == b"1"
    assert len(fake.sandboxes) == 1
    assert fake.recorder.names() == [
        "Sandbox.from_name",
        "App.lookup",
        "Image.debian_slim",
        "Image.apt_install",
        "Sandbox.create",
        "Sandbox.from_name",
        "SandboxFilesystem.read_bytes",
    ]


async def test_modal_errors_become_sandbox_errors(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = fake_modal.make()
    await sandbox.exec("true")
    fake.sandboxes[0].terminated = True
    with pytest.raises(SandboxError, match="iris-alice"):
        await sandbox.exec("true")
    with pytest.raises(SandboxError):
        await sandbox.write_file("x", b"")


async def test_hibernating_an_absent_sandbox_does_nothing(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = fake_modal.make()
    await sandbox.hibernate()
    assert fake.recorder.names() == ["Sandbox.from_name"]
    assert await sandbox.status() == "absent"


async def test_a_sandbox_ended_by_modal_while_idle_is_restored(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    now = [0.0]
    sandbox = ModalSandbox("alice", state=fake_modal.state, sdk=fake, clock=lambda: now[0])
    await sandbox.write_file("a.txt", b"1")
    await sandbox.hibernate()
    await sandbox.exec("true")
    fake.sandboxes[-1].terminated = True
    now[0] += 61
    assert (await sandbox.exec("cat a.txt")).stdout == "1"
    assert len(fake.sandboxes) == 3
