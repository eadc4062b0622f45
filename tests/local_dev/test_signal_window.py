"""A signal that lands between the chat's prompt and its read is not lost.

CPython runs a signal handler between bytecodes, so with a plain ``input()`` a SIGTERM or Ctrl-C
that arrives after the prompt is written but before ``read()`` starts only sets a flag, and
``iris run`` then waits for a line forever (CI's second pass caught this once, SIGTERM ignored
for 60 s). The window is microseconds wide; here strace holds the real ``iris run`` in it: every
write to its stdout (a FIFO, which ``-P`` singles out) is stopped on its way back for
``hold`` seconds, the test sees the prompt while the writer is still held (its state is ``t``,
checked before signalling) and signals it then. Before lineinput.py each case hung.

Skipped where strace is missing, unless IRIS_REQUIRE_STRACE=1 (.ci/run installs strace and
sets it)."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from iris_testing import procs
from iris_testing.waiting import wait_until
from local_dev.chat import CTRL_C_AGAIN
from tests.local_dev.test_no_orphans import (
    IRIS,
    ROOT,
    Output,
    alive,
    assert_all_gone,
    model_pid,
)

HAVE_STRACE = shutil.which("strace") is not None

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="strace and /proc"),
    pytest.mark.skipif(not HAVE_STRACE and os.environ.get("IRIS_REQUIRE_STRACE") != "1",
                       reason="strace is not installed"),
    pytest.mark.timeout(400),
]

HOLDS = (1.0, 4.0, 16.0)  # seconds a write is held; longer when the test was too slow to signal


class HeldRun:
    """``iris run`` under strace, each write to its stdout held for ``hold`` seconds."""

    def __init__(self, environ: dict[str, str], tmp: Path, hold: float) -> None:
        from iris_testing.server import free_port

        fifo = tmp / f"stdout-{hold:g}"
        os.mkfifo(fifo)
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # first, so the writer's open returns
        self.errors = tmp / f"stderr-{hold:g}"
        # buffered as a user's pipe is: the banner is one held write, not one per line
        env = {k: v for k, v in environ.items() if k != "PYTHONUNBUFFERED"}
        # Under libfaketime (CI's second pass) strace's own hold would never run out: strace
        # runs on the real clock and hands the faked one to `iris run` only (-E).
        faked = [k for k in env if k == "LD_PRELOAD" or k.startswith("FAKETIME")]
        with open(fifo, "wb") as writer, self.errors.open("wb") as errors:
            os.set_blocking(reader, True)
            self.tracer = subprocess.Popen(
                ["strace", "-qq", "-o", "/dev/null", "-f", "--seccomp-bpf", "-e", "trace=write",
                 "-P", str(fifo),
                 "-e", f"inject=write:delay_exit={int(hold * 1_000_000)}",
                 *[part for k in faked for part in ("-E", f"{k}={env[k]}")],
                 *IRIS, "run", "--port", str(free_port())],
                env={k: v for k, v in env.items() if k not in faked},
                cwd=ROOT, stdin=subprocess.PIPE, stdout=writer, stderr=errors,
                start_new_session=True,
            )
        self.out = Output(open(reader, "rb"))  # noqa: SIM115 (read by Output's thread)
        # strace first forks short-lived probes, copies of itself: iris run is the child that
        # runs Python
        [self.pid] = wait_until(
            lambda: [pid for pid in procs.children(self.tracer.pid)
                     if procs.cmdline(pid).startswith(f"{sys.executable} -m local_dev.cli run")],
            "iris run to start")

    def say(self, line: str) -> None:
        assert self.tracer.stdin is not None
        self.tracer.stdin.write(line.encode() + b"\n")
        self.tracer.stdin.flush()

    def signal_at_prompt(self, sig: int) -> bool:
        """Signal ``iris run`` once its prompt is out; whether it was still held in the write."""
        self.out.wait("you › ")
        held = procs.state(self.pid) == "t"
        os.kill(self.pid, sig)
        return held

    def report(self) -> str:
        return f"stdout:\n{self.out.text}\nstderr:\n{self.errors.read_text(errors='replace')}"

    def close(self) -> None:
        if self.tracer.poll() is None:
            self.tracer.kill()
            self.tracer.wait()
        if alive(self.pid):
            os.kill(self.pid, signal.SIGKILL)


@pytest.mark.parametrize("how", ["sigterm", "ctrl-c"])
def test_a_signal_just_after_the_prompt_is_not_lost(stand_in_env, tmp_path, how):
    environ, pids = stand_in_env
    for hold in HOLDS:
        run = HeldRun(environ, tmp_path, hold)
        try:
            model = model_pid(pids)
            [dev] = [pid for pid in procs.descendants(run.pid) if alive(pid)
                     and "dev" in procs.cmdline(pid).split()]
            held = run.signal_at_prompt(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
            if how == "ctrl-c":
                run.out.wait(CTRL_C_AGAIN)  # the handler ran: the chat is back at its prompt
                run.say("/exit")
            code = run.tracer.wait(timeout=120)
            assert code == (128 + signal.SIGTERM if how == "sigterm" else 0), run.report()
            assert "Traceback" not in run.report(), run.report()
            assert_all_gone(model, dev)
        finally:
            run.close()
        for stale in pids.iterdir():
            stale.unlink()
        if held:
            return
    pytest.fail(f"the signal never landed while the prompt's write was held (holds {HOLDS})")
