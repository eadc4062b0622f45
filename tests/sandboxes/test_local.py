"""LocalSandbox: process groups, output caps, path escapes and a scrubbed environment."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from iris_testing.waiting import wait_until, within_growing_limit_async
from sandboxes import (
    LinkRefused,
    PathOutsideWorkspace,
    SandboxError,
    SandboxOptions,
    open_sandbox,
)
from sandboxes.local import LocalSandbox, command_env, looks_secret
from tests.sandboxes.fakes import MemoryStateStore

pytestmark = [pytest.mark.anyio, pytest.mark.process]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pids: list[int]) -> None:
    wait_until(lambda: not any(alive(pid) for pid in pids), f"processes {pids} to be gone",
               seen=lambda: [pid for pid in pids if alive(pid)])


async def test_workspace_lives_under_home(home: Path) -> None:
    sandbox = open_sandbox("local", "alice", home=home, state=MemoryStateStore())
    assert isinstance(sandbox, LocalSandbox)
    assert sandbox.workspace == home / "workspaces" / "alice"
    assert (await sandbox.exec("pwd")).stdout.strip() == str(sandbox.workspace.resolve())


async def test_timeout_kills_the_whole_process_group(home: Path) -> None:
    sandbox = LocalSandbox("alice", home=home)
    pid_file = sandbox.workspace / "bg.pid"

    def both_started(_: object) -> bool:  # a loaded machine may not get there in the limit
        return pid_file.exists() and len(pid_file.read_text().split()) == 2

    # The foreground sleep outlasts the test's own timeout: a result at all means it was cut.
    result = await within_growing_limit_async(
        lambda limit: sandbox.exec(
            "sleep 100 & echo $! > bg.pid; (sleep 100; echo never) & echo $! >> bg.pid;"
            " sleep 300", timeout=limit),
        both_started, "both background pids written", first=0.5)
    assert result.timed_out and result.exit_code == -1
    wait_gone([int(line) for line in pid_file.read_text().split()])


async def test_children_ignoring_sigterm_get_sigkill(home: Path) -> None:
    sandbox = LocalSandbox("alice", home=home, options=SandboxOptions(kill_grace=0.2))
    pid_file = sandbox.workspace / "stubborn.pid"
    result = await within_growing_limit_async(
        lambda limit: sandbox.exec(
            "(trap '' TERM; echo $BASHPID > stubborn.tmp; mv stubborn.tmp stubborn.pid;"
            " sleep 100) & wait", timeout=limit),
        lambda _: pid_file.exists(), "the stubborn child's pid written", first=0.5)
    assert result.timed_out
    (pid,) = [int(x) for x in pid_file.read_text().split()]
    wait_gone([pid])


async def test_background_process_holding_stdout_does_not_block(home: Path) -> None:
    sandbox = LocalSandbox("alice", home=home)
    result = await sandbox.exec("sleep 300 & echo $! > holder.pid; echo started")
    assert result.exit_code == 0 and result.stdout == "started\n"
    # The command came back while the process holding its stdout still runs.
    (holder,) = [int(x) for x in (sandbox.workspace / "holder.pid").read_text().split()]
    assert alive(holder)
    os.kill(holder, signal.SIGKILL)
    wait_gone([holder])


async def test_signal_deaths_report_128_plus_signal(home: Path) -> None:
    result = await LocalSandbox("alice", home=home).exec("kill -9 $$")
    assert result.exit_code == 137 and not result.timed_out


async def test_output_keeps_head_and_tail(home: Path) -> None:
    sandbox = LocalSandbox("alice", home=home, options=SandboxOptions(output_limit=2000))
    result = await sandbox.exec("seq 1 100000; seq 1 3 >&2")
    assert result.truncated
    head, tail = result.stdout.split("\n[... ")
    assert head.startswith("1\n2\n3\n") and len(head) == 1000
    omitted, kept = tail.split(" bytes omitted ...]\n")
    assert kept.endswith("99999\n100000\n") and len(kept) == 1000
    assert int(omitted) == len("".join(f"{n}\n" for n in range(1, 100001))) - 2000
    assert result.stderr == "1\n2\n3\n"


async def test_large_output_is_not_held_in_memory(home: Path) -> None:
    sandbox = LocalSandbox("alice", home=home, options=SandboxOptions(output_limit=100))
    result = await sandbox.exec("head -c 50000000 /dev/zero | tr '\\0' x")
    assert result.truncated and result.exit_code == 0
    assert "49999900 bytes omitted" in result.stdout


@pytest.mark.parametrize(
    "path", ["..", "../bob/x", "/etc/passwd", "link-out/passwd", "file-link", "link-out"]
)
async def test_escapes_are_refused(home: Path, path: str) -> None:
    sandbox = LocalSandbox("alice", home=home)
    outside = home.parent / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("secret")
    (sandbox.workspace / "link-out").symlink_to(outside)
    (sandbox.workspace / "file-link").symlink_to(outside / "passwd")
    for operation in (
        sandbox.read_file(path),
        sandbox.write_file(path, b"x"),
        sandbox.list_dir(path),
        sandbox.exec("true", cwd=path),
    ):
        with pytest.raises(PathOutsideWorkspace):
            await operation
    assert (outside / "passwd").read_text() == "secret"
    assert sorted(p.name for p in outside.iterdir()) == ["passwd"]


async def test_symlinks_are_not_followed_even_inside_the_workspace(home: Path) -> None:
    sandbox = LocalSandbox("alice", home=home)
    await sandbox.write_file("real/data.txt", b"ok")
    (sandbox.workspace / "alias").symlink_to("real")
    with pytest.raises(LinkRefused, match="symbolic link"):
        await sandbox.read_file("alias/data.txt")
    absolute = str(sandbox.workspace / "real" / "data.txt")
    assert await sandbox.read_file(absolute) == b"ok"
    assert [e.name for e in await sandbox.list_dir()] == ["alias", "real"]


async def test_write_keeps_mode_and_leaves_no_temp_files(home: Path) -> None:
    sandbox = LocalSandbox("alice", home=home)
    await sandbox.exec("printf 'echo v1' > run.sh && chmod 755 run.sh")
    await sandbox.write_file("run.sh", b"echo v2")
    assert (await sandbox.exec("./run.sh")).stdout == "v2\n"
    assert [e.name for e in await sandbox.list_dir()] == ["run.sh"]
    with pytest.raises(SandboxError):
        await sandbox.write_file(".", b"x")


async def test_bad_cwd_is_an_error(home: Path) -> None:
    sandbox = LocalSandbox("alice", home=home)
    await sandbox.write_file("file.txt", b"")
    for cwd in ("missing", "file.txt"):
        with pytest.raises(SandboxError, match="not a directory"):
            await sandbox.exec("true", cwd=cwd)


async def test_secrets_never_reach_commands(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "IRIS_API_KEY": "iris-secret",
        "OPENAI_API_KEY": "sk-secret",
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "GITHUB_TOKEN": "ghp-secret",
        "DB_PASSWORD": "pw-secret",
        "SLACK_SIGNING_SECRET": "slack-secret",
    }
    for name, value in {**secrets, "HARMLESS_SETTING": "visible", "TOOL_HOME": "/opt"}.items():
        monkeypatch.setenv(name, value)
    options = SandboxOptions(env_passthrough=("TOOL_HOME", "GITHUB_TOKEN", "HARMLESS_MISSING"))
    sandbox = LocalSandbox("alice", home=home, options=options)
    env_dump = (await sandbox.exec("env", env={"CALLER_VAR": "given"})).stdout
    variables = dict(line.split("=", 1) for line in env_dump.splitlines() if "=" in line)
    for name, value in secrets.items():
        assert name not in variables and value not in env_dump
    assert "HARMLESS_SETTING" not in variables
    assert variables["TOOL_HOME"] == "/opt"
    assert variables["CALLER_VAR"] == "given"
    assert variables["HOME"] == str(sandbox.command_home)  # outside the workspace
    assert variables["TERM"] == "dumb"


def test_command_env_is_built_from_scratch(tmp_path: Path) -> None:
    parent = {"PATH": "/bin", "OPENAI_API_KEY": "x", "LANG": "de_DE.UTF-8", "SHELL": "/bin/zsh"}
    env = command_env(tmp_path, {"TERM": "xterm"}, parent)
    assert env == {"PATH": "/bin", "HOME": str(tmp_path), "LANG": "de_DE.UTF-8", "TERM": "xterm"}
    assert command_env(tmp_path, None, {})["PATH"] == os.defpath


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("IRIS_HOME", True),
        ("ANTHROPIC_API_KEY", True),
        ("aws_region", True),
        ("HF_TOKEN", True),
        ("MYSQL_ROOT_PASSWORD", True),
        ("CLIENT_SECRET", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("PATH", False),
        ("KEYBOARD", False),
        ("TOKENIZERS_PARALLELISM", False),
    ],
)
def test_looks_secret(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret
