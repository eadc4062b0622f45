"""The result of reading one platform event, shared by the Telegram and Slack parsers."""

from __future__ import annotations

from dataclasses import dataclass

from core.messages import InboundMessage


@dataclass(frozen=True)
class Parsed:
    """What to do with an event: record ``message``, or answer it with ``reply`` without a
    turn, or ignore it (no message; ``reason`` says why)."""

    message: InboundMessage | None = None
    reply: str | None = None
    reason: str = ""
    group_ref: str | None = None  # the group chat whose scope owns the data
    group_title: str | None = None
