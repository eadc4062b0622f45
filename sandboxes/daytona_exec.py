"""Commands in a Daytona sandbox, run so that what they printed survives a timeout.

``process.exec`` answers a command that outlives its timeout with an error and none of its
output, so a command runs instead as an asynchronous command in a session of its own:

1. ``create_session`` then ``execute_session_command(run_async=True)``: the command line
   changes to the working directory, sets the environment, and runs ``bash --noprofile --norc
   -c <command>`` under the sandbox's ``timeout`` (coreutils or busybox), which stops the whole
   process group after the timeout so the command's last lines reach the session's log.
2. ``get_session_command`` is polled (50 ms, doubling to 1 s) until the exit code is known, or
   for at most the timeout plus ``BACKSTOP_GRACE`` seconds when the sandbox has no ``timeout``
   (the result then carries ``BACKSTOP_NOTE``), or until the caller sets ``stop`` (the turn
   was cancelled, or the caller asked for the command to end: ``stopped`` in the result).
3. ``get_session_command_logs`` returns stdout and stderr, separately, as far as they got.
4. ``delete_session`` removes the logs and TERMs, then KILLs, the session's process group
   (apps/daemon/pkg/session/delete.go). It is always called, also after a failure or a stop.
   GNU ``timeout`` moves the command into a process group of its own, out of reach of that
   kill, so a command stopped before its end (a cancel, the backstop) is first killed by its
   environment marker (``sandboxes.base.kill_argv``) with ``process.exec``.

A stop that comes while the command is still starting (the sandbox being woken, its session
being opened) refuses to start it: ``start`` looks before opening the session and again before
starting the command, and raises ``sandboxes.base.Stopped`` with nothing left behind. A stop
that comes later is seen by ``finish`` at once, which kills the command by its marker.

A command is reported as timed out when ``timeout`` stopped it (exit 124, or 137 after the
kill grace) at or after its timeout, or when the backstop was reached.
"""

from __future__ import annotations

import re
import shlex
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from sandboxes.base import (
    COMMAND_HOME,
    KILL_TIMEOUT,
    RUN_MARKER,
    SandboxError,
    Stopped,
    backstop_note,
    kill_argv,
    shell_argv,
)

POLL_FIRST = 0.05
POLL_MAX = 1.0
PAUSE_SLICE = 0.05  # how soon a stop is seen while waiting between polls
KILL_AFTER = 5
"""Seconds ``timeout`` waits after its TERM before it sends KILL."""
BACKSTOP_GRACE = 10.0
STOPPED_BY_TIMEOUT = frozenset({124, 137})
BACKSTOP_NOTE = backstop_note("Daytona")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Started:
    run_id: str
    session_id: str
    command_id: str
    at: float


@dataclass(frozen=True)
class Finished:
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    note: str = ""
    stopped: bool = False


def command_line(command: str, workdir: PurePosixPath, env: dict[str, str], seconds: int,
                 run_id: str) -> str:
    """The line the session's shell runs. It never ends that shell (no ``exit``, no ``exec``):
    the session writes the command's exit code after it."""
    for name in env:
        if not _ENV_NAME.fullmatch(name):
            raise SandboxError(f"invalid environment variable name for a command: {name!r}")
    variables = {**env, "HOME": COMMAND_HOME, RUN_MARKER: run_id}
    assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in variables.items())
    run = f"env {assignments} {shlex.join(shell_argv(command))}"
    return (
        f"cd {shlex.quote(str(workdir))} && if command -v timeout >/dev/null 2>&1; "
        f"then timeout -k {KILL_AFTER} {seconds} {run}; else {run}; fi"
    )


def start(sdk: Any, sandbox: Any, line: str, run_id: str,
          stopped: Callable[[], bool] = lambda: False) -> Started:
    """Open a session and start ``line`` in it; a failed start leaves no session behind.
    Raises ``Stopped``, having started nothing, once ``stopped()`` says a stop came first."""
    process = sandbox.process
    session_id = f"iris-{run_id}"
    if stopped():
        raise Stopped()
    process.create_session(session_id)
    try:
        if stopped():
            raise Stopped()
        at = time.monotonic()
        response = process.execute_session_command(
            session_id, sdk.SessionExecuteRequest(command=line, run_async=True)
        )
    except BaseException:
        with suppress(sdk.DaytonaError):
            process.delete_session(session_id)
        raise
    return Started(run_id, session_id, response.cmd_id, at)


def finish(
    sdk: Any,
    sandbox: Any,
    run: Started,
    seconds: int,
    transient: Callable[[BaseException], bool],
    stop: threading.Event | None = None,
) -> Finished:
    """Wait for the command, read its output, and delete its session (always). Once ``stop``
    is set, stop waiting: the command is killed by its marker and its session deleted."""
    process = sandbox.process
    deadline = run.at + seconds + BACKSTOP_GRACE
    delay = POLL_FIRST
    exit_code: int | None = None
    stop = stop or threading.Event()
    try:
        while not stop.is_set():
            try:
                exit_code = process.get_session_command(run.session_id, run.command_id).exit_code
            except sdk.DaytonaError as exc:
                if not transient(exc):
                    raise
            if exit_code is not None:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                break
            _pause(stop, min(delay, left))
            delay = min(delay * 2, POLL_MAX)
        if exit_code is None:  # cancelled, or the backstop: end the command first
            with suppress(sdk.DaytonaError):
                process.exec(shlex.join(kill_argv(run.run_id)), timeout=KILL_TIMEOUT)
        logs = process.get_session_command_logs(run.session_id, run.command_id)
    finally:
        with suppress(sdk.DaytonaError):
            process.delete_session(run.session_id)
    elapsed = time.monotonic() - run.at
    stdout = logs.stdout if logs.stdout is not None else (logs.output or "")
    stopped = exit_code is None and stop.is_set()
    timed_out = not stopped and (
        exit_code is None or (exit_code in STOPPED_BY_TIMEOUT and elapsed >= seconds))
    note = BACKSTOP_NOTE if exit_code is None and not stopped else ""
    return Finished(stdout, logs.stderr or "", exit_code, timed_out, note, stopped)


def _pause(stop: threading.Event, seconds: float) -> None:
    """Sleep ``seconds`` in short slices, returning early once ``stop`` is set. Not
    ``stop.wait(seconds)``: a timed wait turns the timeout into an absolute deadline on the
    monotonic clock, and a clock-shifting tool (libfaketime, as CI's second pass uses) moves
    that clock, so the wait could last days; a relative sleep cannot."""
    end = time.monotonic() + seconds
    while not stop.is_set():
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(PAUSE_SLICE, left))
