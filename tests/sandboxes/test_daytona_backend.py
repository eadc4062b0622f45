"""DaytonaSandbox against the fake ``daytona`` SDK: label lookup, states, start, stop and exec
(each numbered test names the defect of issue 19 it guards)."""

from __future__ import annotations

import asyncio
import shlex
import threading
import warnings

import pytest
from daytona.common import errors

from iris_testing.sandboxes.fake_daytona import FakeDaytona
from iris_testing.waiting import within_growing_limit_async
from sandboxes import SandboxError, SandboxFileNotFound, SandboxOptions, WorkspaceLost, daytona_exec
from sandboxes.base import COMMAND_HOME, TIMEOUT_EXIT_CODE, shell_argv
from sandboxes.daytona_backend import DaytonaSandbox
from tests.sandboxes.conftest import Backend, alive, until

pytestmark = [pytest.mark.anyio, pytest.mark.process]
ECHO_PID_THEN_SLEEP = "echo $$ > began.tmp && mv began.tmp began && exec sleep 60"


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
        "Process.create_session",
        "SessionExecuteRequest",
        "Process.execute_session_command",
        "Process.get_session_command",
        *["Process.get_session_command"] * (fake.recorder.names().count(
            "Process.get_session_command") - 1),
        "Process.get_session_command_logs",
        "Process.delete_session",
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
    (request,) = fake.recorder.named("SessionExecuteRequest")
    assert request.kwargs["run_async"] is True
    (session,) = {c.args[0] for c in fake.recorder.calls if c.name.startswith("Process.")}
    run = session.removeprefix("iris-")  # the run's marker, so a cancel can kill the command
    assert request.kwargs["command"] == (
        "cd /home/daytona && if command -v timeout >/dev/null 2>&1; then timeout -k 5 3 "
        f"env HOME={COMMAND_HOME} IRIS_RUN_ID={run} bash --noprofile --norc -c "
        "'mkdir -p \"$HOME\" 2>/dev/null; echo hi'; else "
        f"env HOME={COMMAND_HOME} IRIS_RUN_ID={run} bash --noprofile --norc -c "
        "'mkdir -p \"$HOME\" 2>/dev/null; echo hi'; fi"
    )
    assert [c.args[0] for c in fake.recorder.named("Process.delete_session")] == [session]
    (record,) = fake.for_user("alice")
    assert fake_daytona.state.get_sandbox_state("alice", "daytona") == {"sandbox_id": record.id}


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
    assert (await sandbox.exec("cat a.txt")).stdout == "1"
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


async def test_env_and_quoting_reach_the_command(fake_daytona: Backend) -> None:
    sandbox = fake_daytona.make()
    result = await sandbox.exec("echo \"$A\" 'it''s' && echo err >&2", env={"A": "x y"})
    assert (result.stdout, result.stderr) == ("x y its\n", "err\n")


async def test_client_errors_become_sandbox_errors(tmp_path) -> None:
    fake = FakeDaytona(tmp_path)
    with pytest.raises(SandboxError, match="Daytona client"):
        no_key = SandboxOptions(daytona_api_key="")
        await DaytonaSandbox("alice", options=no_key, sdk=fake).exec("x")


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


async def test_2_a_sandbox_daytona_stopped_under_a_cached_handle_is_woken(
    fake_daytona: Backend,
) -> None:
    fake = fake_of(fake_daytona)
    sandbox = fake_daytona.make()
    await sandbox.write_file("a.txt", b"1")
    fake.for_user("alice")[0].state = "stopped"  # auto-stopped within the handle's idle time
    assert await sandbox.read_file("a.txt") == b"1"
    assert (await sandbox.exec("cat a.txt")).stdout == "1"


async def test_3_a_build_failed_sandbox_is_deleted_and_created_again(
    fake_daytona: Backend,
) -> None:
    fake = fake_of(fake_daytona)
    fake.build_fails = True
    sandbox = fake_daytona.make()
    with pytest.raises(SandboxError, match="build_failed"):
        await sandbox.exec("true")
    fake.build_fails = False
    assert (await sandbox.exec("echo ok")).stdout == "ok\n"
    assert [r.state for r in fake.for_user("alice")] == ["destroyed", "started"]


@pytest.mark.parametrize("reason", ["disk full"])
async def test_3_a_recoverable_error_is_recovered_not_started(
    fake_daytona: Backend, reason: str
) -> None:
    fake = fake_of(fake_daytona)
    await fake_daytona.make().write_file("a.txt", b"1")
    (record,) = fake.for_user("alice")
    record.state, record.recoverable, record.error_reason = "error", True, reason
    sandbox = fake_daytona.make()
    assert await sandbox.status() == "hibernated"
    assert await sandbox.read_file("a.txt") == b"1"
    assert record.history == ["recover from error"]
    assert "Sandbox.start" not in fake.recorder.names()


async def test_3_an_unrecoverable_error_is_replaced_and_the_user_told(
    fake_daytona: Backend,
) -> None:
    fake = fake_of(fake_daytona)
    await fake_daytona.make().write_file("a.txt", b"1")
    (broken,) = fake.for_user("alice")
    broken.state, broken.error_reason = "error", "runner lost"
    sandbox = fake_daytona.make()
    with pytest.raises(WorkspaceLost, match="runner lost"):
        await sandbox.exec("true")
    assert (await sandbox.exec("echo fresh")).stdout == "fresh\n"
    assert broken.state == "error"  # kept for the operator, not deleted
    assert len(fake.for_user("alice")) == 2


@pytest.mark.parametrize(("state", "then"), [
    ("starting", ["started"]),
    ("restoring", ["restoring", "started"]),
    ("stopping", ["stopped"]),
    ("archiving", ["archiving", "archived"]),
])
async def test_3_transitional_states_are_waited_for(
    fake_daytona: Backend, state: str, then: list[str]
) -> None:
    fake = fake_of(fake_daytona)
    await fake_daytona.make().write_file("a.txt", b"1")
    (record,) = fake.for_user("alice")
    record.state, record.then = state, list(then)
    now = [0.0]
    sandbox = DaytonaSandbox(
        "alice", state=fake_daytona.state, sdk=fake, clock=lambda: now[0],
        pause=lambda seconds: now.__setitem__(0, now[0] + seconds),
    )
    assert (await sandbox.exec("cat a.txt")).stdout == "1"
    assert record.state == "started"


async def test_3_a_state_that_never_settles_is_a_clear_error(fake_daytona: Backend) -> None:
    fake = fake_of(fake_daytona)
    await fake_daytona.make().exec("true")
    (record,) = fake.for_user("alice")
    record.state, record.then = "archiving", ["archiving"] * 500
    now = [0.0]
    sandbox = DaytonaSandbox(
        "alice", state=fake_daytona.state, sdk=fake, clock=lambda: now[0],
        pause=lambda seconds: now.__setitem__(0, now[0] + seconds),
    )
    with pytest.raises(SandboxError, match="still archiving"):
        await sandbox.exec("true")
    assert len(fake.for_user("alice")) == 1


async def test_5_one_daytona_client_per_process(fake_daytona: Backend) -> None:
    fake = fake_of(fake_daytona)
    for user in ("alice", "bob", "carol"):
        await fake_daytona.make(user).exec("true")
        await fake_daytona.make(user).status()
    assert fake.clients == 1


async def test_6_a_deleted_sandbox_is_not_reported_as_a_missing_file(
    fake_daytona: Backend,
) -> None:
    fake = fake_of(fake_daytona)
    sandbox = fake_daytona.make()
    await sandbox.write_file("a.txt", b"1")
    (record,) = fake.for_user("alice")
    fake.purge(record.id)  # deleted at Daytona while the handle is cached
    with pytest.raises(WorkspaceLost, match="Daytona no longer has it"):
        await sandbox.read_file("a.txt")
    with pytest.raises(SandboxFileNotFound):
        await sandbox.read_file("a.txt")


async def test_6_a_missing_file_is_still_a_missing_file(fake_daytona: Backend) -> None:
    sandbox = fake_daytona.make()
    await sandbox.exec("true")
    with pytest.raises(SandboxFileNotFound, match=r"nope\.txt"):
        await sandbox.read_file("nope.txt")


async def test_6_the_real_client_is_configured_without_deprecation_warnings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import daytona

    from sandboxes.daytona_client import shared_client

    monkeypatch.setenv("DAYTONA_API_URL", "http://127.0.0.1:9/api")  # loopback, nothing listens
    options = SandboxOptions(daytona_api_key="test-key")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sandbox = DaytonaSandbox("alice", options=options, sdk=daytona)
            with pytest.raises(SandboxError, match="could not look up"):
                await sandbox.status()
    finally:
        shared_client(daytona, options)._event_dispatcher.disconnect()


async def test_13_4_a_profile_in_the_workspace_never_runs(fake_daytona: Backend) -> None:
    sandbox = fake_daytona.make()
    for rc in (".bash_profile", ".bashrc", ".profile", ".zshrc"):
        await sandbox.write_file(rc, b"echo PWNED\n")
    result = await sandbox.exec('echo "$HOME"')
    assert "PWNED" not in result.stdout
    home = result.stdout.strip()  # the fake maps HOME into its machine's directory
    assert home.endswith(COMMAND_HOME) and "/home/daytona" not in home


async def test_a_timed_out_command_keeps_what_it_printed(fake_daytona: Backend) -> None:
    """Daytona's process.exec drops the output of a command it timed out; the session keeps
    it, the command is stopped at its timeout, and its session is deleted."""
    fake = fake_of(fake_daytona)
    sandbox = fake_daytona.make()
    limits: list[float] = []

    def run(limit: float):
        limits.append(limit)
        return sandbox.exec(
            "echo started; echo warming >&2; printf 'no newline'; sleep 60; echo late",
            timeout=limit)

    result = await within_growing_limit_async(
        run,
        lambda result: result.stdout.endswith("no newline"), "the output before the timeout")
    assert result.timed_out and result.exit_code == TIMEOUT_EXIT_CODE
    assert result.stdout == "started\nno newline" and result.stderr == "warming\n"
    assert result.duration >= limits[-1]  # not before its limit; "late" below: cut short
    assert "late" not in result.stdout
    (record,) = fake.for_user("alice")
    assert record.sessions is not None and record.sessions.open == {}
    assert "Process.exec" not in fake.recorder.names()


async def test_a_command_exiting_124_by_itself_is_not_a_timeout(fake_daytona: Backend) -> None:
    result = await fake_daytona.make().exec("echo quick; exit 124", timeout=30)
    assert (result.exit_code, result.timed_out, result.stdout) == (124, False, "quick\n")


async def test_a_sandbox_stopped_while_the_command_runs_is_a_clear_error(
    fake_daytona: Backend,
) -> None:
    fake = fake_of(fake_daytona)
    sandbox = fake_daytona.make()
    await sandbox.exec("true")
    (record,) = fake.for_user("alice")
    fake.recorder.fail("Process.get_session_command", errors.DaytonaBadRequestError(
        "sandbox is stopped; the toolbox is unreachable", status_code=400, source="proxy"))
    with pytest.raises(SandboxError, match=r"the command was cut off.*may have run in part"):
        await sandbox.exec("sleep 60", timeout=30)
    assert fake.recorder.names().count("Process.execute_session_command") == 2  # not rerun
    assert record.sessions is not None and record.sessions.open == {}


async def test_a_bad_environment_name_is_refused_before_anything_runs(
    fake_daytona: Backend,
) -> None:
    fake = fake_of(fake_daytona)
    with pytest.raises(SandboxError, match="invalid environment variable name"):
        await fake_daytona.make().exec("true", env={"A=B": "x"})
    assert "Process.execute_session_command" not in fake.recorder.names()


async def test_a_write_is_one_upload_with_no_mkdir_first(fake_daytona: Backend) -> None:
    """The daemon's upload creates missing parents itself: no ``mkdir -p`` round trip per
    write (execute_code answers each tool request with one)."""
    fake = fake_of(fake_daytona)
    sandbox = fake_daytona.make()
    await sandbox.exec("true")
    fake.recorder.clear()
    await sandbox.write_file(".iris-exec/r1/out/res-000001.json", b"{}")
    await sandbox.write_file(".iris-exec/r1/out/res-000002.json", b"{}")
    assert fake.recorder.names() == ["FileSystem.upload_file"] * 2
    assert await sandbox.read_file(".iris-exec/r1/out/res-000002.json") == b"{}"
    await sandbox.write_file("plain.txt", b"x")
    with pytest.raises(SandboxError, match="not a directory"):
        await sandbox.write_file("plain.txt/inside.txt", b"y")
    assert await sandbox.read_file("plain.txt") == b"x"


async def test_a_cancelled_command_is_stopped_in_the_sandbox(fake_daytona: Backend) -> None:
    fake = fake_of(fake_daytona)
    sandbox = fake_daytona.make()
    await sandbox.exec("true")
    (record,) = fake.for_user("alice")
    running = asyncio.ensure_future(sandbox.exec(ECHO_PID_THEN_SLEEP, timeout=600))
    began = record.container.host("/home/daytona/began")
    await until(began.exists, "the command to start")
    pid = int(began.read_text())  # under GNU timeout: outside the session's process group
    assert alive(pid)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    await until(lambda: not alive(pid), "the command to be stopped")
    sessions = record.sessions
    assert sessions is not None
    await until(lambda: sessions.open == {}, "its session to be deleted")


async def test_the_backstop_returns_what_was_printed_with_a_note(
    fake_daytona: Backend, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sandbox without ``timeout``: the command never ends by itself, so after the grace
    its output so far comes back with a note, and its session is deleted."""
    monkeypatch.setattr(daytona_exec, "BACKSTOP_GRACE", 1.0)
    monkeypatch.setattr(
        daytona_exec, "command_line", lambda command, workdir, env, seconds, run_id: (
            f"cd {workdir} && env IRIS_RUN_ID={run_id} {shlex.join(shell_argv(command))}"))
    fake = fake_of(fake_daytona)
    sandbox = fake_daytona.make()
    result = await within_growing_limit_async(
        lambda limit: sandbox.exec("echo started; echo warming >&2; sleep 60", timeout=limit),
        lambda result: bool(result.stderr), "the output before the backstop")
    assert (result.exit_code, result.timed_out) == (TIMEOUT_EXIT_CODE, True)
    assert (result.stdout, result.stderr) == ("started\n", "warming\n")
    assert result.note == daytona_exec.BACKSTOP_NOTE
    (record,) = fake.for_user("alice")
    assert record.sessions is not None and record.sessions.open == {}


async def test_a_stop_while_the_command_starts_means_it_never_runs(fake_daytona: Backend) -> None:
    """/stop arrives while the command is still starting (its session being opened): the
    command is not started, the result says it was stopped, and no session is left."""
    fake = fake_of(fake_daytona)
    sandbox = fake_daytona.make()
    await sandbox.exec("true")
    (record,) = fake.for_user("alice")
    fake.hold_start, stop = threading.Event(), asyncio.Event()
    running = asyncio.ensure_future(
        sandbox.exec(ECHO_PID_THEN_SLEEP, timeout=600, stop=stop))
    await until(fake.starting.is_set, "the command to be starting")
    stop.set()
    fake.hold_start.set()
    result = await asyncio.wait_for(running, 60)
    assert result.stopped and not result.timed_out
    assert (result.stdout, result.stderr) == ("", "")
    started = [c for c in fake.calls if c.name == "Process.execute_session_command"]
    assert len(started) == 1, "only the first command (true) was started"
    assert not record.container.host("/home/daytona/began").exists()
    assert record.sessions is not None and record.sessions.open == {}


async def test_a_stop_before_the_command_starts_means_it_never_runs(
    fake_daytona: Backend,
) -> None:
    fake = fake_of(fake_daytona)
    stop = asyncio.Event()
    stop.set()
    result = await fake_daytona.make().exec("echo ran > ran", stop=stop)
    assert result.stopped
    assert "Process.execute_session_command" not in fake.recorder.names()
    (record,) = fake.for_user("alice")
    assert not record.container.host("/home/daytona/ran").exists()
