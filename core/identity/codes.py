"""Short one-time codes people can read aloud and type: 8 characters, no look-alikes."""

from __future__ import annotations

import re
import secrets

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
LENGTH = 8
CODE_RE = re.compile(rf"^[{ALPHABET}]{{{LENGTH}}}$")


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def normalize(text: str) -> str:
    """What a person typed, as a code: case, spaces and dashes ignored."""
    return re.sub(r"[\s\-_.`'\"]", "", text).upper()


def looks_like_code(text: str) -> bool:
    return bool(CODE_RE.match(normalize(text)))
