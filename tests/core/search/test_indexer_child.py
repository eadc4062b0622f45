"""The indexing child never outlives the process that started it (core/search/indexer_child.py)."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.search.indexer_child import NICENESS
from iris_testing import procs
from iris_testing.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.process

PARENT = """
import sys
from core.config import load_settings
from core.search.indexer import Indexer

worker = Indexer(load_settings().model_copy(update={"search_indexer": "process"}))
worker.request("u1", "s1")
print(worker.pid, flush=True)
sys.stdin.read()
"""


def test_a_stuck_child_dies_with_a_parent_killed_outright(iris_home):
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    child = None
    try:
        child = int(parent.stdout.readline())
        assert child in procs.children(parent.pid)
        wait_until(
            lambda: procs.nice(child) == procs.nice(parent.pid) + NICENESS,
            "the child to arm its parent-death signal (it renices itself next)",
        )
        # Stopped, the child cannot notice anything itself: it stands for one busy in a long
        # backfill or held by a locked database.
        os.kill(child, signal.SIGSTOP)
        parent.kill()
        parent.wait()
        wait_until(lambda: not procs.running(child), "the orphaned child to be gone")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if child is not None and procs.running(child):  # the test failed: clean up
            os.kill(child, signal.SIGKILL)
