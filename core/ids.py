"""Identifiers shared by the store and the turn. (Time comes from ``core.clock``.)"""

from __future__ import annotations

import re
import secrets
import time

USER_ID_PREFIXES = ("usr_", "grp_")  # a person's and a group's internal ids


def new_id(prefix: str) -> str:
    """A time-ordered, unguessable id like ``ses_018c2f3a9b1e4d7a2c``."""
    return f"{prefix}_{int(time.time() * 1000):011x}{secrets.token_hex(5)}"


def looks_like_user_id(name: str) -> bool:
    """Whether ``name`` reads as an internal user or group id (any case): such names are never
    accepted as a platform's user name, so a name and an id can't be confused."""
    return name.lower().startswith(USER_ID_PREFIXES)


def is_user_id(ref: str) -> bool:
    return re.fullmatch(r"(?:usr|grp)_[0-9a-f]+", ref) is not None
