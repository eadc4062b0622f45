"""The emulator's API key when IRIS_API_KEY is not set: generated once, kept in IRIS_HOME."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from core.private import private_dir


def dev_api_key(home: Path) -> str:
    path = home / "dev-api-key"
    if path.exists():
        return path.read_text().strip()
    private_dir(home)
    key = "iris-dev-" + secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    return key
