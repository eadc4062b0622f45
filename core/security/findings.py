"""What a scan found, and how an excerpt of it is shown (one line, secrets masked)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.security.credentials import mask_secrets
from core.security.untrusted import show_invisible

Category = Literal[
    "prompt_injection",
    "role_hijack",
    "exfiltration",
    "secret",
    "invisible_unicode",
    "dangerous_command",
]

EXCERPT_WIDTH = 80


@dataclass(frozen=True)
class Finding:
    category: Category
    reason: str  # short human sentence, e.g. "reads a credential file (~/.ssh/id_rsa)"
    excerpt: str  # the offending fragment, clipped to ~80 chars, secrets masked


def clip(text: str, start: int, end: int, width: int = EXCERPT_WIDTH) -> str:
    """The fragment around ``text[start:end]``: one line, about ``width`` chars, masked."""
    lo = max(0, start - max(10, (width - (end - start)) // 3))
    floor = max(0, lo - width)  # a word longer than the excerpt is cut, not followed
    while lo > floor and not text[lo - 1].isspace():
        lo -= 1
    hi = min(len(text), start + width)
    ceiling = min(len(text), hi + width)
    while hi < ceiling and not text[hi].isspace():
        hi += 1
    fragment = " ".join(mask_secrets(show_invisible(text[lo:hi])).split())
    head, tail = lo > 0, hi < len(text)
    if len(fragment) > width:
        fragment, tail = fragment[: width - 1], True
    return ("…" if head else "") + fragment + ("…" if tail else "")
