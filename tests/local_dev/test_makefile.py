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
    (venv / ".installed").touch()  # now: newer than pyproject.toml
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


FAKE_PIP = """
import sys, time
from pathlib import Path
marker = Path(sys.argv[1])
print("pip", *sys.argv[2:], flush=True)
if sys.argv[2:3] == ["install"] and "-e" in sys.argv:
    while not marker.exists():  # the build: until the test has seen a progress line
        time.sleep(0.05)
"""


def test_first_make_run_says_what_it_builds_and_how_long_it_has_taken(venv, tmp_path):
    import sys

    from tests.local_dev.test_no_orphans import Output

    (venv / "bin" / "python").unlink()
    (venv / "bin" / "python").symlink_to(sys.executable)
    fake_pip = tmp_path / "fake_pip.py"
    fake_pip.write_text(FAKE_PIP)
    marker = tmp_path / "build-may-end"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IRIS_", "MAKE"))}
    env["PYTHONPATH"] = str(ROOT)
    make = subprocess.Popen(
        ["make", "--no-print-directory", f"VENV={venv}", "PROGRESS_EVERY=0.2", "BUILD_JOBS=2",
         f"PIP={sys.executable} {fake_pip} {marker}", "run"],
        cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    out = Output(make)
    try:
        out.wait("… still installing the offline demo model and its engine: ")
        marker.touch()
        assert make.wait(timeout=60) == 0, out.text
    finally:
        marker.touch()
        if make.poll() is None:
            make.kill()
    out.finish()
    lines = out.text.splitlines()
    first = next(i for i, line in enumerate(lines)
                 if line.startswith("Installing the offline demo model and its engine"))
    assert "expect under a minute" in lines[first] and "5-15 minutes on 2 cores" in lines[first]
    assert any(line.startswith("Installed the offline demo model and its engine in")
               for line in lines)
    assert lines[-1] == "iris run"
    assert "up to date" not in out.text
    assert (venv / ".installed-local-model").exists()


def test_first_install_is_one_line_not_pips_output(venv, tmp_path):
    import sys

    (venv / ".installed").unlink()
    (venv / ".installed-local-model").touch()
    (venv / "bin" / "python").unlink()
    (venv / "bin" / "python").symlink_to(sys.executable)
    fake_pip = tmp_path / "fake_pip.py"
    fake_pip.write_text(FAKE_PIP)
    marker = tmp_path / "build-may-end"
    marker.touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IRIS_", "MAKE"))}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        ["make", "--no-print-directory", f"VENV={venv}", f"PIP={sys.executable} {fake_pip} "
         f"{marker}", "run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == ("Installing Iris and its Python packages into .venv (once; expect 2-8 "
                        f"minutes); output in {venv}/install.log")
    assert lines[1].startswith("Installed Iris and its Python packages into .venv in ")
    assert "pip install -e ." not in result.stdout  # pip's own lines are in the log
    assert "pip install -e ." in (venv / "install.log").read_text()
    assert lines[-1] == "iris run" and (venv / ".installed").exists()


FAKE_PYTHON = """#!/bin/sh
if [ "$1 $2" = "-m pytest" ]; then  # the suite: pytest -q's lines, then its verdict
    echo "........................................ [ 50%]"
    while [ ! -e "$MARKER" ]; do sleep 0.05; done
    if [ "$SUITE_EXIT" = 0 ]; then echo "===== 2 passed, 1 skipped in 0.12s ====="; else
        echo "FAILED tests/test_x.py::test_y - assert 1 == 2"; fi
    exit "$SUITE_EXIT"
fi
exec "$REAL_PYTHON" "$@"
"""


def make_test(venv: Path, tmp_path: Path, suite_exit: int) -> tuple[int, str]:
    """`make test` with ruff, lint-imports and mypy that pass and a suite that waits until a
    progress line was printed, then ends with ``suite_exit``."""
    import sys

    from tests.local_dev.test_no_orphans import Output

    (venv / ".installed-dev").touch()
    for name in ("ruff", "lint-imports", "mypy"):
        (venv / "bin" / name).write_text(f"#!/bin/sh\necho '{name}: all clean'\n")
        (venv / "bin" / name).chmod(0o755)
    (venv / "bin" / "python").write_text(FAKE_PYTHON)
    marker = tmp_path / "suite-may-end"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IRIS_", "MAKE"))}
    env.update(PYTHONPATH=str(ROOT), MARKER=str(marker), SUITE_EXIT=str(suite_exit),
               REAL_PYTHON=sys.executable)
    make = subprocess.Popen(
        ["make", "--no-print-directory", f"VENV={venv}", "PROGRESS_EVERY=0.2", "test"],
        cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = Output(make)
    try:
        out.wait("… still running the test suite: ")
        out.wait("50% done, about ")
        marker.touch()
        code = make.wait(timeout=60)
    finally:
        marker.touch()
        if make.poll() is None:
            make.kill()
    out.finish()
    return code, out.text


def test_make_test_is_quiet_with_progress_and_an_estimate(venv, tmp_path):
    code, text = make_test(venv, tmp_path, 0)
    assert code == 0, text
    assert f"Running the test suite (once; expect tens of minutes on 2 cores; an estimate " \
           f"follows); output in {venv}/test.log" in text
    assert "[ 50%]" not in text  # pytest's own lines are in the log
    assert "[ 50%]" in (venv / "test.log").read_text()
    assert text.strip().splitlines()[-2] == "2 passed, 1 skipped in 0.12s"  # pytest's verdict
    assert text.strip().splitlines()[-1].startswith("Ran the test suite in ")


def test_a_failing_make_test_shows_the_tail_of_pytests_output(venv, tmp_path):
    code, text = make_test(venv, tmp_path, 1)
    assert code != 0
    assert "FAILED tests/test_x.py::test_y - assert 1 == 2" in text
    assert "Running the test suite failed after" in text and f"{venv}/test.log" in text
