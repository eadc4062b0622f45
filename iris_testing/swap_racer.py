"""A hostile process for tests: swaps two names in a directory as fast as it can with
``renameat2(RENAME_EXCHANGE)`` (atomic, so each name is always one of the two things), the
way a script in a sandbox would race Iris' file operations. Prints ``ready`` after the first
swap; runs until killed.

    python -m iris_testing.swap_racer DIR NAME_A NAME_B
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

RENAME_EXCHANGE = 2
AT_FDCWD = -100
PR_SET_PDEATHSIG = 1


def die_with_parent(libc: ctypes.CDLL, parent: int) -> None:
    """SIGKILL this process when the test that started it dies (a killed pytest left it
    spinning for half an hour once)."""
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


def main(directory: str, first: str, second: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    die_with_parent(libc, os.getppid())
    renameat2 = libc.renameat2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    os.chdir(directory)
    a, b = os.fsencode(first), os.fsencode(second)
    if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        error = ctypes.get_errno()
        raise SystemExit(f"renameat2 failed: {os.strerror(error)}")
    print("ready", flush=True)
    while True:
        renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)


if __name__ == "__main__":
    main(*sys.argv[1:4])
