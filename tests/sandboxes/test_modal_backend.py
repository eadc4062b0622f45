"""ModalSandbox against the fake ``modal`` module: call sequences, snapshots, and what happens
when Modal fails (each numbered test names the defect of issue 19 it guards)."""

from __future__ import annotations

import asyncio
import warnings

import modal.exception as errors
import pytest

from core.acting.output import format_exec
from iris_testing.sandboxes.fake_modal import FakeModal
from sandboxes import (
    FileStat,
    Sandbox,
    SandboxError,
    SandboxFileNotFound,
    SandboxOptions,
    WorkspaceLost,
)
from sandboxes.base import COMMAND_HOME, TIMEOUT_EXIT_CODE
from sandboxes.modal_backend import ModalSandbox
from tests.sandboxes.conftest import Backend, alive, until

pytestmark = [pytest.mark.anyio, pytest.mark.process]


def fake_of(backend: Backend) -> FakeModal:
    assert isinstance(backend.fake, FakeModal)
    return backend.fake


def kept_state(backend: Backend) -> dict[str, str]:
    """alice's stored Modal state, which the test expects to be there."""
    state = backend.state.get_sandbox_state("alice", "modal")
    assert state is not None
    return state


async def saved(backend: Backend, content: bytes = b"precious") -> Sandbox:
    """A user whose notes.txt is in a stored snapshot; no sandbox is running."""
    sandbox = backend.make()
    await sandbox.write_file("notes.txt", content)
    await sandbox.hibernate()
    return sandbox


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
        "StreamReader.__aiter__",
        "StreamReader.__aiter__",
        "ContainerProcess.wait",
    ]
    assert fake.recorder.named("Sandbox.from_name")[0].args == ("iris-sandboxes", "iris-alice")
    lookup = fake.recorder.named("App.lookup")[0]
    assert lookup.args == ("iris-sandboxes",) and lookup.kwargs == {"create_if_missing": True}
    create = fake.recorder.named("Sandbox.create")[0]
    assert create.args == ()
    assert (create.kwargs["name"], create.kwargs["tags"]) == ("iris-alice", {"iris-user": "alice"})
    assert create.kwargs["image"].object_id == "im-base"
    assert (create.kwargs["timeout"], create.kwargs["idle_timeout"]) == (900, 120)
    assert create.kwargs["workdir"] == "/workspace"
    exec_call = fake.recorder.named("Sandbox.exec")[0]
    assert exec_call.args[:4] == ("bash", "--noprofile", "--norc", "-c")
    assert exec_call.args[4].endswith("; echo hi")
    run_id = exec_call.kwargs["env"].get("IRIS_RUN_ID", "")
    assert len(run_id) == 32  # the marker that lets a cancel or the backstop stop it
    assert exec_call.kwargs == {
        "workdir": "/workspace", "timeout": 8,
        "env": {"HOME": COMMAND_HOME, "IRIS_RUN_ID": run_id},
    }


async def test_later_calls_reuse_the_sandbox(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = fake_modal.make()
    await sandbox.exec("true")
    await sandbox.write_file("a/b.txt", b"x")
    await fake_modal.make().read_file("a/b.txt")
    assert fake.recorder.names().count("Sandbox.create") == 1
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
    assert fake.recorder.calls[0].kwargs == {"timeout": 600, "ttl": None}
    assert fake.recorder.calls[1].kwargs == {"wait": True}
    (image_id,) = fake.images
    assert fake_modal.state.get_sandbox_state("alice", "modal") == {"image_id": image_id}
    assert fake.sandboxes[0].phase == "finished"


async def test_resume_restores_from_the_snapshot(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = await saved(fake_modal)
    fake.recorder.clear()
    await sandbox.resume()
    (image_id,) = fake.images
    assert fake.recorder.names() == [
        "Sandbox.from_name", "App.lookup", "Image.from_id", "Sandbox.create",
    ]
    assert fake.recorder.named("Image.from_id")[0].args == (image_id,)
    assert fake.recorder.named("Sandbox.create")[0].kwargs["image"].object_id == image_id
    assert await sandbox.read_file("notes.txt") == b"precious"


async def test_a_sandbox_started_concurrently_elsewhere_is_adopted(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    await fake_modal.make().write_file("first.txt", b"1")
    fake.from_name_misses = 1
    fake.recorder.clear()
    late = fake_modal.make()
    assert await late.stat("first.txt") == FileStat(kind="file", size=1)
    assert len(fake.sandboxes) == 1
    names = fake.recorder.names()  # the stat is a command run in the adopted sandbox
    start = names.index("Sandbox.create")
    assert names[start:start + 3] == ["Sandbox.create", "Sandbox.from_name", "Sandbox.exec"]
    assert await late.read_file("first.txt") == b"1"
    assert fake.recorder.names()[-1] == "SandboxFilesystem.read_bytes"


async def test_hibernating_an_absent_sandbox_does_nothing(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = fake_modal.make()
    await sandbox.hibernate()
    assert fake.recorder.names() == ["Sandbox.from_name"]
    assert await sandbox.status() == "absent"


@pytest.mark.parametrize("error", [
    errors.ServiceError("UNAVAILABLE"), errors.ConnectionError("reset by peer"),
    errors.AuthError("token expired"), errors.InternalError("internal"),
    errors.ResourceExhaustedError("Insufficient capacity to create sandbox."),
])
async def test_1_a_failed_restore_keeps_the_snapshot(
    fake_modal: Backend, error: Exception
) -> None:
    fake = fake_of(fake_modal)
    sandbox = await saved(fake_modal)
    stored = fake_modal.state.get_sandbox_state("alice", "modal")
    fake.recorder.fail("Sandbox.create", error)
    with pytest.raises(SandboxError, match=type(error).__name__) as caught:
        await sandbox.exec("ls")
    assert not isinstance(caught.value, WorkspaceLost)
    assert fake_modal.state.get_sandbox_state("alice", "modal") == stored
    assert await sandbox.read_file("notes.txt") == b"precious"
    await sandbox.hibernate()
    files = fake.images[kept_state(fake_modal)["image_id"]].files
    assert files is not None and (files / "workspace" / "notes.txt").read_bytes() == b"precious"


async def test_1_an_expired_snapshot_starts_empty_and_says_so(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = await saved(fake_modal)
    (image_id,) = fake.images
    fake.expire(image_id)
    with pytest.raises(WorkspaceLost, match="no longer exists at Modal") as caught:
        await sandbox.exec("touch ran")
    assert "expired" in caught.value.reason
    assert kept_state(fake_modal)["lost_image_id"] == image_id
    assert (await sandbox.exec("ls")).stdout == ""  # the command above did not run
    with pytest.raises(SandboxFileNotFound):
        await sandbox.read_file("notes.txt")


async def test_2_a_sandbox_modal_ended_is_dropped_and_the_call_retried(
    fake_modal: Backend,
) -> None:
    fake = fake_of(fake_modal)
    sandbox = await saved(fake_modal)
    assert (await sandbox.exec("cat notes.txt")).stdout == "precious"
    for call in ("exec", "read", "write"):
        fake.sandboxes[-1].end()  # out of memory, lifetime or idle timeout
        fake.recorder.clear()
        if call == "exec":
            assert (await sandbox.exec("cat notes.txt")).stdout == "precious"
            assert fake.recorder.names().count("Sandbox.exec") == 2
        elif call == "read":
            assert await sandbox.read_file("notes.txt") == b"precious"
        else:
            await sandbox.write_file("more.txt", b"x")
            assert await sandbox.read_file("more.txt") == b"x"
        assert fake.recorder.names().count("Sandbox.create") == 1


async def test_2_a_command_cut_off_mid_run_is_reported_not_rerun(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = await saved(fake_modal)
    await sandbox.exec("true")
    fake.recorder.fail("ContainerProcess.wait", errors.ConflictError("Sandbox already finished"))
    with pytest.raises(SandboxError, match="cut off"):
        await sandbox.exec("echo once >> log.txt")
    assert fake.recorder.names().count("Sandbox.exec") == 2  # the "true" and this one, no rerun
    assert await sandbox.read_file("notes.txt") == b"precious"
    # the command itself went on in the sandbox; let it end before the test's loop closes
    await until(lambda: all(p.finished for p in fake.processes), "the command to end")


async def test_4_a_large_workspace_gets_time_to_snapshot(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    fake.snapshot_seconds = 120  # longer than Modal's 55 s default
    await saved(fake_modal)
    assert kept_state(fake_modal)["image_id"] in fake.images


async def test_4_a_failed_snapshot_keeps_the_sandbox_and_the_stored_id(
    fake_modal: Backend,
) -> None:
    fake = fake_of(fake_modal)
    sandbox = await saved(fake_modal, b"v1")
    stored = fake_modal.state.get_sandbox_state("alice", "modal")
    await sandbox.write_file("notes.txt", b"v2")
    fake.snapshot_seconds = 10_000
    with pytest.raises(SandboxError, match="keeps running"):
        await sandbox.hibernate()
    assert fake_modal.state.get_sandbox_state("alice", "modal") == stored
    assert "Sandbox.terminate" not in fake.recorder.names()[-2:]
    assert await sandbox.read_file("notes.txt") == b"v2"


async def test_4_a_resume_right_after_hibernate_never_adopts_the_dying_sandbox(
    fake_modal: Backend,
) -> None:
    fake = fake_of(fake_modal)
    sandbox = await saved(fake_modal)
    assert fake.sandboxes[0].phase == "finished"
    assert (await fake_modal.make().exec("cat notes.txt")).stdout == "precious"
    assert (await sandbox.exec("cat notes.txt")).stdout == "precious"


async def test_6_restoring_uses_no_deprecated_modal_call(fake_modal: Backend) -> None:
    sandbox = await saved(fake_modal)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        await sandbox.resume()
    assert await sandbox.read_file("notes.txt") == b"precious"


async def test_13_4_commands_read_no_profile_and_home_is_outside_the_workspace(
    fake_modal: Backend,
) -> None:
    sandbox = fake_modal.make()
    for rc in (".bash_profile", ".bashrc", ".profile", ".bash_login"):
        await sandbox.write_file(rc, b"echo PWNED\n")
    result = await sandbox.exec('echo "$HOME"')
    assert "PWNED" not in result.stdout + result.stderr
    home = result.stdout.strip()  # the fake maps HOME into its machine's directory
    assert home.endswith(COMMAND_HOME) and "/workspace" not in home


async def test_a_sandbox_ended_by_modal_while_idle_is_restored(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    now = [0.0]
    sandbox = ModalSandbox("alice", state=fake_modal.state, sdk=fake, clock=lambda: now[0])
    await sandbox.write_file("a.txt", b"1")
    await sandbox.hibernate()
    await sandbox.exec("true")
    fake.sandboxes[-1].end()
    now[0] += 61
    assert (await sandbox.exec("cat a.txt")).stdout == "1"
    assert len(fake.sandboxes) == 3


async def test_the_backstop_returns_what_was_printed_and_stops_the_command(
    fake_modal: Backend,
) -> None:
    """Modal never reports the end of a command past its timeout: after the grace the
    command's output so far comes back with a note, and the command is killed."""
    fake = fake_of(fake_modal)
    fake.exec_overruns = True
    sandbox = fake_modal.make(options=SandboxOptions(modal_exec_grace=5))  # ample for two echoes
    result = await sandbox.exec("echo started; echo warming >&2; sleep 60; echo late", timeout=1)
    assert (result.exit_code, result.timed_out) == (TIMEOUT_EXIT_CODE, True)
    assert (result.stdout, result.stderr) == ("started\n", "warming\n")
    assert "did not report the command's end" in result.note
    killer = fake.recorder.named("Sandbox.exec")[-1]
    assert "IRIS_RUN_ID=" in killer.args[-1]
    await until(lambda: fake.processes[0].finished, "the overrunning command to be killed")
    assert "[Modal did not report" in format_exec(result, 1000)


async def test_a_cancelled_command_is_killed_in_the_sandbox(fake_modal: Backend) -> None:
    fake = fake_of(fake_modal)
    sandbox = fake_modal.make()
    await sandbox.exec("true")
    running = asyncio.ensure_future(sandbox.exec(
        "echo $$ > began.tmp && mv began.tmp began && exec sleep 60", timeout=600))
    began = fake.sandboxes[-1].container.host("/workspace/began")
    await until(began.exists, "the command to start")
    pid = int(began.read_text())
    command = fake.processes[-1]
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    await until(lambda: not alive(pid), "the cancelled command to be killed")
    await until(lambda: command.finished, "the command's streams to end")
    assert "IRIS_RUN_ID=" in fake.recorder.named("Sandbox.exec")[-1].args[-1]
