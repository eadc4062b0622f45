"""Child processes that die with the process that started them.

``iris run`` starts ``iris dev``, which starts the embedded model server. Each child gets its own
session (a Ctrl-C typed in the terminal reaches only the process the user is talking to, which
then stops its children in order) and a parent-death signal: on Linux ``prctl(PR_SET_PDEATHSIG)``
set between fork and exec, elsewhere a small watchdog process that polls the parent. So a parent
killed with SIGKILL, which runs no clean-up, still leaves no model server behind.

The Linux signal fires when the *thread* that spawned the child ends: spawn from the main thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.5


def _linux_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl: Callable[..., int] = libc.prctl
    except (OSError, AttributeError):
        return None
    return prctl


def _die_with(parent: int, death_signal: int, prctl: Callable[..., int]) -> Callable[[], None]:
    def preexec() -> None:  # runs in the child between fork and exec: nothing that allocates much
        prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return preexec


def spawn_tied(
    command: Sequence[str], *, death_signal: int = signal.SIGTERM, watchdog: bool = False,
    **popen: Any,
) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(command, **popen)`` in a new session, sent ``death_signal`` when this
    process dies, however it dies (``watchdog``: use the polling watchdog even on Linux)."""
    prctl = None if watchdog else _linux_prctl()
    parent = os.getpid()
    if prctl is not None:
        return subprocess.Popen(
            list(command), start_new_session=True,
            preexec_fn=_die_with(parent, int(death_signal), prctl), **popen,
        )
    child: subprocess.Popen[bytes] = subprocess.Popen(
        list(command), start_new_session=True, **popen
    )
    subprocess.Popen(
        [sys.executable, "-m", "local_dev.tied", str(parent), str(child.pid),
         str(int(death_signal))],
        start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return child


def stop(process: subprocess.Popen[Any], *, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; always reaps the child."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watch(parent: int, child: int, death_signal: int) -> None:
    """The watchdog where there is no parent-death signal: poll until the child is gone or the
    parent is, then signal the child."""
    while _alive(child):
        if not _alive(parent):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, death_signal)
            return
        time.sleep(WATCH_SECONDS)


if __name__ == "__main__":
    watch(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
