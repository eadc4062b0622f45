"""Prompt assembly: a system prompt frozen per session, plus the conversation tail."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from core.messages import Message

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store
    from core.store.sessions import Session, StoredMessage

BASE_PROMPT = """\
You are Iris, a personal AI agent. You remember what matters across conversations, learn \
reusable procedures, and act through tools. Be direct and useful; ask when a request is \
ambiguous; never invent tool results. When a tool fails, read its error and try a fix or \
explain what went wrong."""


@dataclass(frozen=True)
class PromptInputs:
    store: Store
    settings: Settings
    user_id: str
    session: Session
    platform: str
    first_message: str


PromptSection = Callable[[PromptInputs], str | None]


def base_section(inputs: PromptInputs) -> str:
    started = datetime.fromtimestamp(inputs.session.started_at, UTC)
    from core.platforms.registry import PLATFORMS

    hint = PLATFORMS[inputs.platform].prompt_hint
    return (
        f"{BASE_PROMPT}\n{hint}\n"
        f"This session started {started:%Y-%m-%d %H:%M} UTC; use the clock tool for the time now."
    ).replace("\n\n", "\n")


def build_system_prompt(inputs: PromptInputs, sections: Sequence[PromptSection]) -> str:
    parts = [text for section in sections if (text := section(inputs))]
    return "\n\n".join(parts)


def conversation_tail(history: Sequence[StoredMessage]) -> list[Message]:
    """Messages safe to send as history: never starting with a tool result whose call is gone."""
    messages = [stored.message for stored in history]
    start = 0
    while start < len(messages) and messages[start].role == "tool":
        start += 1
    messages = messages[start:]
    if messages and messages[-1].role == "assistant" and messages[-1].tool_calls:
        messages.pop()
    return messages
