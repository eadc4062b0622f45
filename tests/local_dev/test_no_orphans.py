"""The embedded model server dies with whatever started it: `iris run` left by /exit, Ctrl-C,
SIGTERM or SIGKILL, and `iris dev` killed outright. Real processes all the way down: the real
`iris run` starts the real `iris dev`, whose real spawn code starts the real model server
(`python -m local_dev.model_server`), here on a stand-in engine (iris_testing/stand_in_model.py)
so each case loads no model."""

import codecs
import io
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from iris_testing import procs, stand_in_model
from iris_testing.server import free_port
from iris_testing.signals import ignoring_sigint
from iris_testing.waiting import wait_until
from local_dev.chat import CTRL_C_AGAIN

ROOT = Path(__file__).resolve().parents[2]
IRIS = [sys.executable, "-m", "local_dev.cli"]

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
    pytest.mark.timeout(400),  # three Python processes start per case; slow on a loaded machine
]


alive = procs.running  # not gone, and not a zombie waiting for a reaper


def pids_with(*words: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = [part.decode(errors="replace") for part in argv]
        if all(word in text for word in words) and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_for(condition, what: str, timeout: float = 120.0):
    return wait_until(condition, what, timeout=timeout)


class Output:
    """A process's stdout (or any buffered binary stream), read by a thread so the test can
    wait for a line."""

    def __init__(self, source: subprocess.Popen[str] | io.BufferedIOBase) -> None:
        self.text = ""
        if isinstance(source, subprocess.Popen):
            # a text-mode pipe: its stdout is a TextIOWrapper (typed IO[str], without .buffer)
            assert isinstance(source.stdout, io.TextIOWrapper)
            source = source.stdout.buffer
        self._thread = threading.Thread(target=self._read, args=(source,), daemon=True)
        self._thread.start()

    def _read(self, raw: io.BufferedIOBase) -> None:
        # chunks, not lines: a prompt ends in no newline
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := raw.read1(4096):
            self.text += decoder.decode(chunk)

    def finish(self) -> None:
        """Wait for the end of the output (the process has exited)."""
        self._thread.join(30)

    def wait(self, fragment: str) -> None:
        wait_for(lambda: fragment in self.text, f"{fragment!r} in:\n{self.text}")


def model_pid(pids: Path) -> int:
    files = wait_for(lambda: list(pids.iterdir()), "the model server to start")
    assert len(files) == 1
    return int(files[0].name)


def assert_all_gone(*pids: int) -> None:
    wait_for(lambda: not any(alive(pid) for pid in pids), f"processes {pids} to end", 60)


@pytest.mark.parametrize("how", ["exit", "ctrl-c", "sigterm", "sigkill"])
def test_iris_run_leaves_no_model_server(stand_in_env, how):
    environ, pids = stand_in_env
    port = free_port()
    run = subprocess.Popen(
        ignoring_sigint([*IRIS, "run", "--port", str(port)]), env=environ, cwd=ROOT, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    out = Output(run)
    try:
        out.wait("you › ")  # the prompt: input() is reading, the signal handlers are in place
        model = model_pid(pids)
        [dev] = pids_with("dev", "--port", str(port))
        assert alive(model) and alive(dev)
        assert run.stdin is not None
        if how == "exit":
            run.stdin.write("hello\n")
            run.stdin.flush()
            out.wait(stand_in_model.REPLY)
            run.stdin.write("/exit\n")
            run.stdin.flush()
        elif how == "ctrl-c":
            os.killpg(run.pid, signal.SIGINT)
            out.wait(CTRL_C_AGAIN)
            os.killpg(run.pid, signal.SIGINT)
        elif how == "sigterm":
            run.terminate()
        else:
            run.kill()
        run.wait(timeout=60)
        if how in ("exit", "ctrl-c"):
            assert run.returncode == 0, out.text
        assert_all_gone(model, dev)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()


def test_iris_dev_killed_outright_leaves_no_model_server(stand_in_env):
    environ, pids = stand_in_env
    port = free_port()
    dev = subprocess.Popen([*IRIS, "dev", "--port", str(port)], env=environ, cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    try:
        model = model_pid(pids)
        wait_for(lambda: _healthy(port), "iris dev to answer")
        dev.kill()
        dev.wait(timeout=30)
        assert_all_gone(model)
    finally:
        if dev.poll() is None:
            dev.kill()
            dev.wait()


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200
    except httpx.HTTPError:
        return False
