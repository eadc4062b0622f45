"""Two worker processes add to one user's memory at the same moment: both succeed, no update
is lost (compare-and-set on a per-user, per-target version, with retry). The workers' first
writes are made to collide (see memory_writer), so the retry path always runs."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PER_WORKER = 40


def test_two_processes_adding_at_once_lose_nothing(store, iris_home, tmp_path):
    user = store.users.for_account("http:alice")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IRIS_MEMORY_LIMIT_CHARS": "100000"}
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.core.memory.memory_writer", user, name,
             str(PER_WORKER), str(tmp_path)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for name in ("one", "two")
    ]
    scans = []
    for worker in workers:
        out, err = worker.communicate(timeout=90)
        assert worker.returncode == 0, err
        scans.append(int(out.strip()))
    contents = [e.content for e in store.memory.entries(user, "memory")]
    expected = {f"{name} fact number {i}" for name in ("one", "two") for i in range(PER_WORKER)}
    assert sorted(contents) == sorted(expected)
    assert store.memory.versions(user)["memory"] == 2 * PER_WORKER
    retries = sum(scans) - 2 * PER_WORKER
    print(f"\n{2 * PER_WORKER} concurrent adds from 2 processes: all kept, {retries} CAS retries")
    assert retries > 0, "the two workers never collided; the test did not exercise the CAS"
