"""Shared helpers: output capping, workspace paths, user ids, the handle cache, open_sandbox."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from sandboxes import (
    PathOutsideWorkspace,
    SandboxOptions,
    cap_output,
    open_sandbox,
    resolve_in_workspace,
    validate_user_id,
)
from sandboxes.base import HandleCache
from sandboxes.daytona_backend import DaytonaSandbox
from sandboxes.modal_backend import ModalSandbox
from tests.sandboxes.fakes import MemoryStateStore

ROOT = PurePosixPath("/workspace")


def test_cap_output_leaves_short_text_alone() -> None:
    assert cap_output("abc", limit=3) == ("abc", False)
    assert cap_output("", limit=0) == ("", False)


def test_cap_output_keeps_head_and_tail() -> None:
    text = "".join(f"{n:05d}\n" for n in range(10_000))
    capped, truncated = cap_output(text, limit=1001)
    assert truncated
    head, rest = capped.split("\n[... ", 1)
    marker, tail = rest.split(" ...]\n", 1)
    assert head == text[:500]
    assert tail == text[-501:]
    assert marker == f"{len(text) - 1001} characters omitted"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".", "/workspace"),
        ("", "/workspace"),
        ("a/b.txt", "/workspace/a/b.txt"),
        ("a/../b", "/workspace/b"),
        ("./a//b/", "/workspace/a/b"),
        ("/workspace/x", "/workspace/x"),
        ("/workspace", "/workspace"),
    ],
)
def test_remote_paths_resolve_lexically(path: str, expected: str) -> None:
    assert resolve_in_workspace(ROOT, path) == PurePosixPath(expected)


@pytest.mark.parametrize(
    "path", ["..", "../x", "a/../../x", "/etc/passwd", "/workspacex", "//etc", "/", "a\x00b"]
)
def test_remote_escapes_are_refused(path: str) -> None:
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ROOT, path)


def test_local_paths_follow_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "in").mkdir(parents=True)
    (root / "to-in").symlink_to(root / "in")
    (root / "to-out").symlink_to(tmp_path)
    assert resolve_in_workspace(root, "to-in/f") == (root / "in" / "f").resolve()
    assert resolve_in_workspace(root, "missing/deeper") == (root / "missing/deeper").resolve()
    assert resolve_in_workspace(root, "to-out/ws/in") == (root / "in").resolve()
    for escaping in ("to-out", "to-out/other", "in/../../ws-sibling"):
        with pytest.raises(PathOutsideWorkspace):
            resolve_in_workspace(root, escaping)


@pytest.mark.parametrize("user_id", ["alice", "u_1", "A.b-c", "7", "x" * 59])
def test_valid_user_ids(user_id: str) -> None:
    assert validate_user_id(user_id) == user_id


@pytest.mark.parametrize("user_id", ["", ".", "..", "-x", "a/b", "a b", "é", "x" * 60, None])
def test_invalid_user_ids(user_id: str) -> None:
    with pytest.raises(ValueError, match="invalid user id"):
        validate_user_id(user_id)


def test_handle_cache_forgets_idle_handles() -> None:
    now = [0.0]
    cache = HandleCache(10, clock=lambda: now[0])
    assert cache.get() is None
    cache.set("h")
    now[0] = 9
    assert cache.get() == "h"
    now[0] = 18
    assert cache.get() == "h"
    now[0] = 29
    assert cache.get() is None


def test_open_sandbox_rejects_unknown_backends(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown sandbox backend"):
        open_sandbox("docker", "alice", home=tmp_path, state=MemoryStateStore())  # type: ignore[arg-type]


def test_open_sandbox_builds_cloud_backends_without_network(tmp_path: Path) -> None:
    state = MemoryStateStore()
    options = SandboxOptions(daytona_api_key="test-key", daytona_api_url="http://127.0.0.1:9")
    modal_sandbox = open_sandbox("modal", "alice", home=tmp_path, state=state, options=options)
    daytona_sandbox = open_sandbox("daytona", "alice", home=tmp_path, state=state, options=options)
    assert isinstance(modal_sandbox, ModalSandbox)
    assert isinstance(daytona_sandbox, DaytonaSandbox)
    assert (modal_sandbox.backend, daytona_sandbox.backend) == ("modal", "daytona")
    assert not (tmp_path / "workspaces").exists()


def test_importing_the_package_loads_no_sdk() -> None:
    code = (
        "import sys, sandboxes, sandboxes.base, sandboxes.local, sandboxes.modal_backend, "
        "sandboxes.daytona_backend; "
        "print(sorted(m for m in ('modal', 'daytona', 'grpclib') if m in sys.modules))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd()
    )
    assert shown.stdout.strip() == "[]"
