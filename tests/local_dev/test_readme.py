"""Every shell example in the README runs as written against a fresh emulator on the demo model
(a fresh IRIS_HOME, nothing configured), in order, each in bash with what the earlier ones
exported, and exits 0. Only the port differs (8787 may be taken here). The few that need what
a test cannot have are named below with the reason."""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from iris_testing.server import free_port
from iris_testing.waiting import wait_until
from tests.local_dev.test_model_server import _real_model

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```(?:sh|bash)\n(.*?)^```", re.S | re.M)
NOT_RUN = {  # line start → why this test does not run it
    "make run": "the install itself: tests/local_dev/test_makefile.py, test_newcomer.py",
    "make test": "the whole suite: tests/local_dev/test_makefile.py",
    "make bench": "every benchmark: minutes of CPU",
    "make check": "a subset of the suite itself (lint, types, unit tests)",
    "export IRIS_MODEL=": "needs a paid model's API key",
    ".venv/bin/python -m pytest": "part of the suite itself",
    "modal ": "needs a Modal account", "iris setup": "asks for cloud accounts",
    "iris doctor --cloud": "needs cloud accounts", "iris deploy": "needs a Modal account",
}

pytestmark = pytest.mark.timeout(900)


def examples() -> list[str]:
    """The README's shell lines in order: continuations joined, comment lines dropped."""
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in BLOCK.findall(text):
        joined = re.sub(r"\\\n\s*", "", block)
        lines += [line for line in joined.splitlines()
                  if line.strip() and not line.lstrip().startswith("#")]
    return lines


def test_the_examples_are_found_and_only_the_named_ones_are_skipped():
    lines = examples()
    assert any(line.startswith("curl ") for line in lines)
    assert any(line.startswith("iris dev ") for line in lines)
    for start in NOT_RUN:
        assert any(line.startswith(start) for line in lines), f"{start!r} is no longer in README"


def _exported(path: Path) -> dict[str, str]:
    pairs = (item.split("=", 1) for item in path.read_bytes().decode().split("\0") if "=" in item)
    return dict(pairs)


def test_every_readme_shell_example_exits_0_against_the_emulator(iris_home, tmp_path):
    _real_model()  # the demo model answers, as after `make run` (skips where not installed)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRIS_")}
    env.update({"IRIS_HOME": str(iris_home), "PYTHONPATH": str(ROOT), "USER": "reader",
                "IRIS_SANDBOX_ISOLATION": "none", "IRIS_URL": f"http://127.0.0.1:{port}",
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"})
    dev: subprocess.Popen[bytes] | None = None
    ran = []
    try:
        for line in examples():
            if any(line.startswith(start) for start in NOT_RUN):
                continue
            line = line.replace("8787", str(port))
            if line.startswith("iris dev "):  # runs until stopped: started, then waited for
                log = (tmp_path / "dev.log").open("wb")
                server = subprocess.Popen(["bash", "-c", f"exec {line}"], env=env,
                                          cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True)
                dev = server
                wait_until(lambda started=server: _healthy(port) or started.poll() is not None,
                           "the emulator to answer /healthz", timeout=300)
                assert server.poll() is None, (tmp_path / "dev.log").read_text()
                ran.append(line)
                continue
            saved = tmp_path / "env"
            script = f"{line}\nstatus=$?\nenv -0 > {saved}\nexit $status\n"
            done = subprocess.run(["bash", "-c", script], env=env, cwd=tmp_path,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            env = _exported(saved)
            ran.append(line)
    finally:
        if dev is not None and dev.poll() is None:
            os.killpg(dev.pid, signal.SIGTERM)
            dev.wait(60)
    assert any(line.startswith("curl ") for line in ran) and len(ran) >= 10


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
