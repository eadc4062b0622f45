"""The guard `make check` relies on (tests/markers.py): a test not marked `process` that starts
one fails, whichever way the process is started. Nothing here starts a process: each attempt
is refused before the fork."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys

import pytest

from tests.markers import refuse_processes


def _child() -> None:  # the target of the refused multiprocessing children
    pass


# Not "forkserver": a forkserver already running in this worker (started by any earlier test)
# would fork the child outside this process, where no guard can see it; starting one goes
# through the same spawnv_passfds as "spawn".
@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_a_multiprocessing_child_is_refused_and_recorded(monkeypatch, method):
    guard = refuse_processes("tests/x.py::test_y", monkeypatch)
    process = multiprocessing.get_context(method).Process(target=_child, daemon=True)
    with pytest.raises(AssertionError, match=r"tests/x.py::test_y starts a process"):
        process.start()
    assert guard.attempts, "the attempt is recorded, so a caught error still fails the test"
    assert "not marked `process`" in guard.message()


def test_subprocess_and_asyncio_subprocesses_are_refused(monkeypatch):
    guard = refuse_processes("t", monkeypatch)
    with pytest.raises(AssertionError):
        subprocess.run([sys.executable, "-c", "pass"], check=False)

    async def run() -> None:
        await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")

    with pytest.raises(AssertionError):
        asyncio.run(run())
    assert guard.attempts == ["subprocess", "subprocess"]


def test_posix_spawn_is_refused(monkeypatch):
    guard = refuse_processes("t", monkeypatch)
    with pytest.raises(AssertionError):
        os.posix_spawn(sys.executable, [sys.executable, "-c", "pass"], dict(os.environ))
    assert guard.attempts == ["os.posix_spawn"]
