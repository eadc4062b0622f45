"""`make run` from the real Makefile, with a stand-in virtualenv whose `iris` only echoes, so
what make itself prints is what a user sees around the chat."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")

IRIS = """#!/bin/sh
case "$1 $2" in
  "config has-model") exit 1 ;;
  *) echo "iris $*" ;;
esac
"""


@pytest.fixture
def venv(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, text in (("python", "#!/bin/sh\nexit 0\n"), ("iris", IRIS)):
        (venv / "bin" / name).write_text(text)
        (venv / "bin" / name).chmod(0o755)
    (venv / ".installed").touch()
    os.utime(venv / ".installed", (2**31 - 10, 2**31 - 10))  # newer than pyproject.toml
    return venv


def make_run(venv: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IRIS_", "MAKE"))}
    return subprocess.run(["make", "--no-print-directory", f"VENV={venv}", "run"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)


def test_second_make_run_prints_only_the_chat(venv):
    (venv / ".installed-local-model").touch()
    result = make_run(venv)
    assert result.returncode == 0, result.stderr
    assert "up to date" not in result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "iris run"
