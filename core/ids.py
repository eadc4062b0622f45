"""Identifiers shared by the store and the turn. (Time comes from ``core.clock``.)"""

from __future__ import annotations

import secrets
import time


def new_id(prefix: str) -> str:
    """A time-ordered, unguessable id like ``ses_018c2f3a9b1e4d7a2c``."""
    return f"{prefix}_{int(time.time() * 1000):011x}{secrets.token_hex(5)}"
