"""What a turn returns (``TurnOutcome``), how it ends early (``TurnCancelled``), and where its
reply goes (``OutboundReply``): the types the loop, its commit, the after-turn hooks and the
scheduler's outbound rules share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.messages import Message, Usage


class TurnCancelled(Exception):
    """The chat asked to stop this turn (``/stop``); checked between model and tool steps."""


@dataclass
class TurnOutcome:
    session_id: str
    messages: list[Message]
    reply: str
    usage: list[Usage] = field(default_factory=list)
    status: str = "done"
    error: str | None = None
    tool_calls: int = 0
    model: str | None = None
    command: str | None = None
    target_extras: dict[str, Any] = field(default_factory=dict)  # for the sender: buttons


@dataclass(frozen=True)
class OutboundReply:
    platform: str
    target: dict[str, Any]
    text: str
    chat_key: str | None = None  # the chat it goes to, when not the entry's own (cron jobs)
