"""Local workspace files stay inside the workspace whatever a racing process does, pipes
never block, and one user's stuck file operations never hold up another user's."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from iris_testing.waiting import until
from sandboxes import FilesBusy, LinkRefused, NotARegularFile, SandboxError
from sandboxes.file_pool import FilePool
from sandboxes.local import LocalSandbox
from sandboxes.workspace_fs import WorkspaceFiles, openat2_available

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 250


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest) -> str:
    if request.param == "openat2" and openat2_available() is None:
        pytest.skip("this kernel has no openat2 (the walk is tested instead)")
    return str(request.param)


def sandbox(home: Path, mode: str, user: str = "alice", pool: FilePool | None = None
            ) -> LocalSandbox:
    box = LocalSandbox(user, home=home, pool=pool)
    box.files = WorkspaceFiles(box.workspace, use_openat2=mode == "openat2")
    assert box.files.uses_openat2 == (mode == "openat2")
    return box


@contextlib.contextmanager
def racing(directory: Path, first: str, second: str) -> Iterator[None]:
    """A separate process swapping ``first`` and ``second`` (renameat2 RENAME_EXCHANGE)."""
    racer = subprocess.Popen(
        [sys.executable, "-m", "iris_testing.swap_racer", str(directory), first, second],
        stdout=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert racer.stdout is not None and racer.stdout.readline().strip() == b"ready"
        yield
    finally:
        racer.kill()
        racer.wait()


def release(pipe: Path) -> None:
    """Open ``pipe`` for writing and close it: a reader stuck opening it (old code) returns."""
    with contextlib.suppress(OSError):
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))


async def test_a_racing_link_swap_never_reads_or_writes_outside(tmp_path: Path, mode: str
                                                                 ) -> None:
    box = sandbox(tmp_path / "home", mode)
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "secret.txt").write_text("HOST SECRET")
    (box.workspace / "d").mkdir()
    (box.workspace / "d" / "secret.txt").write_text("inside")
    (box.workspace / "l").symlink_to(outside)
    seen: Counter[str] = Counter()
    with racing(box.workspace, "d", "l"):
        for n in range(ROUNDS):
            try:
                seen[(await box.read_file("d/secret.txt")).decode()] += 1
            except SandboxError as exc:
                seen[f"read {type(exc).__name__}"] += 1
            try:
                await box.write_file(f"d/new-{n}.txt", b"x")
                seen["wrote"] += 1
            except SandboxError as exc:
                seen[f"write {type(exc).__name__}"] += 1
    assert "HOST SECRET" not in seen, seen
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"], seen
    real = next(p for p in (box.workspace / "d", box.workspace / "l") if not p.is_symlink())
    assert len(list(real.glob("new-*.txt"))) == seen["wrote"]
    # the race really ran both ways: some operations met the directory, some the link
    assert seen["inside"] > 0 and seen["read LinkRefused"] > 0, seen
    assert set(seen) <= {"inside", "wrote", "read LinkRefused", "write LinkRefused"}, seen


async def test_links_are_refused_at_any_component(tmp_path: Path, mode: str) -> None:
    box = sandbox(tmp_path / "home", mode)
    (box.workspace / "real").mkdir()
    (box.workspace / "real" / "f.txt").write_text("ok")
    (box.workspace / "dir-link").symlink_to("real")
    (box.workspace / "file-link").symlink_to("real/f.txt")
    for path in ("dir-link/f.txt", "file-link", "dir-link"):
        for operation in (box.read_file(path), box.read_range(path, 0, 10),
                          box.write_file(path, b"x"), box.list_dir(path)):
            with pytest.raises(LinkRefused, match="symbolic link"):
                await operation
    assert (await box.stat("file-link")).kind == "link"
    await box.write_file("new/deeper/f.txt", b"made")
    assert (box.workspace / "new" / "deeper" / "f.txt").read_bytes() == b"made"
    with pytest.raises(LinkRefused):
        await box.write_file("dir-link/sub/g.txt", b"x")
    assert not (box.workspace / "real" / "sub").exists()
    await box.delete("file-link")
    assert (box.workspace / "real" / "f.txt").read_text() == "ok"


async def test_pipes_of_eight_users_answer_at_once_and_another_user_reads(tmp_path: Path,
                                                                          mode: str) -> None:
    home = tmp_path / "home"
    pipes: list[Path] = []
    boxes = [sandbox(home, mode, f"user{n}") for n in range(8)]
    for box in boxes:
        os.mkfifo(box.workspace / "p")
        pipes.append(box.workspace / "p")
    other = sandbox(home, mode, "carol")
    (other.workspace / "notes.txt").write_text("carol's notes")
    try:
        reads = [asyncio.wait_for(box.read_file("p"), 20) for box in boxes for _ in range(2)]
        outcomes = await asyncio.gather(*reads, return_exceptions=True)
        assert all(isinstance(o, NotARegularFile) and "named pipe" in str(o)
                   for o in outcomes), outcomes
        assert await asyncio.wait_for(other.read_file("notes.txt"), 20) == b"carol's notes"
    finally:
        for pipe in pipes:
            release(pipe)


async def test_one_users_stuck_operations_hold_only_their_own_slots() -> None:
    pool = FilePool(workers=4, per_user=2, timeout=1.0)
    gate = threading.Event()
    try:
        stuck = [asyncio.ensure_future(pool.run("mallory", "reading 'p'", gate.wait))
                 for _ in range(2)]
        await until(lambda: pool.running("mallory") == 2, "mallory's two stuck operations")
        with pytest.raises(FilesBusy, match="could not start"):
            await pool.run("mallory", "reading 'q'", lambda: "never runs")
        for task in stuck:
            with pytest.raises(FilesBusy, match="did not finish"):
                await task
        assert pool.running("mallory") == 2  # given up, but their threads still hold the slots
        assert await pool.run("carol", "reading 'notes'", lambda: "carol's answer") == \
            "carol's answer"
        gate.set()
        await until(lambda: pool.running("mallory") == 0, "mallory's threads to return")
        assert await pool.run("mallory", "reading 'q'", lambda: 7) == 7
    finally:
        gate.set()
        pool.shutdown()


async def test_large_files_are_refused_before_reading_and_read_in_windows(tmp_path: Path,
                                                                          mode: str) -> None:
    box = sandbox(tmp_path / "home", mode)
    big = box.workspace / "sparse.bin"
    with open(big, "wb") as handle:
        handle.truncate(1 << 30)
        handle.seek((1 << 30) - 3)
        handle.write(b"end")
    with pytest.raises(SandboxError, match="1073741824 bytes"):
        await box.read_file("sparse.bin")
    window = await box.read_range("sparse.bin", (1 << 30) - 5, 100)
    assert (window.data, window.size) == (b"\0\0end", 1 << 30)


async def test_a_file_on_the_way_is_named_as_a_file_not_a_link(tmp_path: Path, mode: str
                                                                ) -> None:
    box = sandbox(tmp_path / "home", mode)
    (box.workspace / "notes.txt").write_text("plain")
    for attempt in (box.read_file("notes.txt/inner"), box.list_dir("notes.txt")):
        with pytest.raises(SandboxError, match="not a directory") as caught:
            await attempt
        assert not isinstance(caught.value, LinkRefused)
