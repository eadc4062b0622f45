"""The local backend under bubblewrap: one user's commands see that user's workspace and
nothing else of the host (no other workspace, no IRIS_HOME, no host environment, no host
processes), and a profile written into the workspace never runs.

Skipped where bubblewrap is not installed, unless IRIS_REQUIRE_BWRAP=1 (CI sets it), which
makes a missing bwrap a failure.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from core.acting.isolation import local_isolation
from core.errors import ConfigError
from sandboxes import SandboxError, SandboxOptions
from sandboxes.local import LocalSandbox

pytestmark = [pytest.mark.process, pytest.mark.anyio]

HAVE_BWRAP = shutil.which("bwrap") is not None
needs_bwrap = pytest.mark.skipif(
    not HAVE_BWRAP and os.environ.get("IRIS_REQUIRE_BWRAP") != "1",
    reason="bubblewrap is not installed (apt-get install bubblewrap)",
)
ISOLATED = SandboxOptions(local_isolation="bwrap")


@pytest.fixture
def home(iris_home: Path) -> Path:
    (iris_home / "iris.db").write_text("every user's messages")
    return iris_home


@needs_bwrap
async def test_a_command_sees_only_its_own_workspace(home: Path, monkeypatch) -> None:
    monkeypatch.setenv("IRIS_MODEL_API_KEY", "sk-host-secret-123")
    alice = LocalSandbox("alice", home=home, options=ISOLATED)
    bob = LocalSandbox("bob", home=home, options=ISOLATED)
    await bob.write_file("diary.txt", b"bob's secret diary")
    await alice.write_file("notes.txt", b"alice's notes")

    result = await alice.exec(
        "pwd; cat notes.txt; cat ../bob/diary.txt; cat ../../iris.db; ls /; "
        f"ls {home}; cat {home}/iris.db; env; cat /proc/1/environ /proc/$PPID/environ; ps -e"
    )
    seen = result.stdout + result.stderr
    assert result.stdout.startswith("/workspace\nalice's notes")
    for leak in ("bob's secret diary", "every user's messages", "sk-host-secret-123", "IRIS_"):
        assert leak not in seen, leak
    assert f"cannot access '{home}': No such file or directory" in result.stderr
    assert "python" not in result.stdout and "pytest" not in result.stdout  # no host processes


@needs_bwrap
async def test_a_profile_in_the_workspace_never_runs(home: Path) -> None:
    alice = LocalSandbox("alice", home=home, options=ISOLATED)
    for name in (".bash_profile", ".bashrc", ".profile", ".bash_login"):
        await alice.write_file(name, b"echo PROFILE-RAN > /workspace/ran\n")
    result = await alice.exec("echo $HOME; ls -a")
    assert result.stdout.splitlines()[0] == "/home/iris"
    assert "ran" not in result.stdout.split()


async def test_unisolated_commands_skip_profiles_too(home: Path) -> None:
    alice = LocalSandbox("alice", home=home)
    await alice.write_file(".bash_profile", b"echo PROFILE-RAN\n")
    await alice.write_file(".bashrc", b"echo RC-RAN\n")
    result = await alice.exec("echo ok")
    assert result.stdout == "ok\n"
    home_dir = (await alice.exec("echo $HOME")).stdout.strip()
    assert not Path(home_dir).resolve().is_relative_to(alice.workspace.resolve())


@needs_bwrap
async def test_background_processes_end_with_the_command(home: Path) -> None:
    alice = LocalSandbox("alice", home=home, options=ISOLATED)
    await alice.exec("sleep 30 & echo started")
    assert "sleep 30" not in (await alice.exec("ps -e -o args")).stdout


@needs_bwrap
async def test_the_network_can_be_switched_off(home: Path) -> None:
    offline = LocalSandbox("alice", home=home,
                           options=SandboxOptions(local_isolation="bwrap", local_network=False))
    result = await offline.exec("cat /proc/net/dev")
    assert [line.split(":")[0].strip() for line in result.stdout.splitlines()[2:]] == ["lo"]


def test_isolation_is_demanded_for_strangers_and_refused_without_bwrap(
    settings, store, monkeypatch
) -> None:
    monkeypatch.setattr("sandboxes.isolation.bwrap_path", lambda: None)
    auto = settings.model_copy(update={"sandbox_isolation": "auto"})
    assert local_isolation(auto, store) == "none"  # nobody yet: one trusted person
    store.users.for_account("http:alice")
    assert local_isolation(auto, store) == "none"
    store.users.for_account("http:bob")
    with pytest.raises(ConfigError, match=r"apt-get install bubblewrap.*sandbox_isolation: none"):
        local_isolation(auto, store)
    from pydantic import SecretStr

    on_telegram = settings.model_copy(update={
        "sandbox_isolation": "auto", "telegram_token": SecretStr("1:x"),
        "telegram_secret": SecretStr("s")})
    with pytest.raises(ConfigError, match="answers on telegram"):
        local_isolation(on_telegram, None)
    assert local_isolation(settings.model_copy(update={"sandbox_isolation": "none"}),
                           store) == "none"
    with pytest.raises(ConfigError, match="bubblewrap is not installed"):
        local_isolation(settings.model_copy(update={"sandbox_isolation": "bwrap"}), store)


def test_a_sandbox_that_must_isolate_refuses_to_start_without_bwrap(home, monkeypatch) -> None:
    monkeypatch.setattr("sandboxes.local.bwrap_path", lambda: None)
    with pytest.raises(SandboxError, match="bubblewrap"):
        LocalSandbox("alice", home=home, options=ISOLATED)
