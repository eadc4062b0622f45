"""Start a child as the harshest parent would, for tests that signal it."""

from __future__ import annotations

import sys


def ignoring_sigint(argv: list[str]) -> list[str]:
    """``argv`` started with SIGINT ignored, as a script's background job starts it (children
    inherit that, and Python then raises no KeyboardInterrupt): a process that must answer
    Ctrl-C installs its handler itself, before it says it is ready."""
    code = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            "os.execvp(sys.argv[1], sys.argv[1:])")
    return [sys.executable, "-c", code, *argv]
