"""The chat's line input, whose wait any signal ends.

CPython runs a Python signal handler between bytecodes. A signal that lands after ``input()``
has written its prompt but before its ``read()`` starts only sets a flag, and ``read()`` then
blocks until a line comes: the SIGTERM that should stop ``iris run`` (and its emulator) or the
Ctrl-C that should stop a turn is lost. Reading a pipe or a file (``iris run`` driven by a
script, a supervisor or a test), the prompt is therefore written from Python, and the wait for
input is a ``select()`` on stdin and on a pipe the signal itself writes to
(``signal.set_wakeup_fd``): a signal that arrives at any moment either runs its handler before
the wait (the next bytecode) or wakes it. On a terminal ``input()`` keeps readline's line
editing; readline's own wait has the same window, narrower than a keystroke.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from typing import TextIO


class LineInput:
    """``input(prompt)``, line by line, from ``stdin`` (``sys.stdin`` by default)."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._pending = b""
        self._ended = False

    def read(self, prompt: str) -> str:
        """One line without its newline; ``EOFError`` once the input has ended."""
        stdin = self._stdin or sys.stdin
        fd = _waitable_fd(stdin)
        if fd is None:
            return input(prompt)
        stdout = self._stdout or sys.stdout
        stdout.write(prompt)
        stdout.flush()
        while b"\n" not in self._pending and not self._ended:
            _wait_readable(fd)
            chunk = os.read(fd, 65536)  # retried after a signal whose handler returned
            if chunk:
                self._pending += chunk
            else:
                self._ended = True
        if not self._pending:
            raise EOFError
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode(getattr(stdin, "encoding", None) or "utf-8", errors="replace")


def _waitable_fd(stream: TextIO | None) -> int | None:
    """The descriptor to wait on, or None where ``input()`` reads (a terminal, no descriptor,
    Windows, a thread other than the main one, which runs no handler)."""
    if stream is None or sys.platform == "win32":
        return None
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        if stream.isatty():
            return None
        return stream.fileno()
    except (OSError, ValueError, AttributeError):  # closed, or no descriptor (a StringIO)
        return None


def _wait_readable(fd: int) -> None:
    """Until ``fd`` has input, or a signal arrived (its handler then runs and may raise)."""
    wake_read, wake_write = os.pipe()
    try:
        os.set_blocking(wake_write, False)
        previous = signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
        try:
            select.select([fd, wake_read], [], [])
        finally:
            with contextlib.suppress(ValueError):
                signal.set_wakeup_fd(previous)
    finally:
        os.close(wake_read)
        os.close(wake_write)
