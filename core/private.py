"""Iris' own state on disk is its owner's alone: directories it creates are 0700, files 0600.

The home holds every user's conversations (``iris.db``), secrets (``.env``, the dev API key)
and workspaces; with the common umask of 022 a plain ``mkdir`` would let every local account
read them.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def private_dir(path: Path) -> Path:
    """``mkdir -p path``, each directory it creates readable by its owner only."""
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
        os.chmod(directory, 0o700)  # mkdir's mode is masked by the umask; this is exact
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty with mode 0600 when it does not exist yet (its directory too)."""
    private_dir(path.parent)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return path
