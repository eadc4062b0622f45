"""One skill import per user at a time (issue 28, item 8a), across processes: while one
``iris skills import`` of alice's is running (blocked reading a FIFO in its source directory),
a second one of hers is refused with a clear message and changes nothing; bob's runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from iris_testing.waiting import wait_until
from tests.core.skills.conftest import skill_md

ROOT = Path(__file__).resolve().parents[2]


def _skill(root: Path, name: str) -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(skill_md(name, f"Does {name}. Use when asked."))
    return root


def _iris(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "local_dev.cli", *args], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _opening_a_fifo(pid: int) -> bool:
    """Whether a thread of ``pid`` waits in the kernel for a FIFO's other end (read-only)."""
    for wchan in Path(f"/proc/{pid}/task").glob("*/wchan"):
        try:
            if wchan.read_text() in ("wait_for_partner", "fifo_open"):
                return True
        except OSError:
            continue
    return False


def test_a_second_import_by_the_same_user_is_refused_while_one_runs(iris_home, tmp_path):
    slow = _skill(tmp_path / "slow", "tea-timer")
    fifo = slow / "tea-timer" / "notes.md"
    os.mkfifo(fifo)
    first = _iris("skills", "import", str(slow), "--user", "http:alice")
    try:
        wait_until(lambda: first.poll() is not None or _opening_a_fifo(first.pid),
                   "the first import to read the FIFO")
        assert first.poll() is None, first.communicate()
        second = _iris("skills", "import", str(_skill(tmp_path / "other", "pot-warmer")),
                       "--user", "http:alice")
        out, _ = second.communicate(timeout=120)
        assert second.returncode == 1, out
        assert "another skill import of yours is running" in out
        bobs = _skill(tmp_path / "bobs", "kettle")
        bob = _iris("skills", "import", str(bobs), "--user", "http:bob")
        out, _ = bob.communicate(timeout=120)
        assert bob.returncode == 0, out
    finally:
        try:  # lets the first import read and finish
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.write(writer, b"notes")
            os.close(writer)
        except OSError:  # no reader: the first import already ended
            pass
        out, _ = first.communicate(timeout=120)
    assert first.returncode == 0, out
    listed = subprocess.run([sys.executable, "-m", "local_dev.cli", "skills", "list", "--user",
                             "http:alice"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "tea-timer" in listed.stdout and "pot-warmer" not in listed.stdout
