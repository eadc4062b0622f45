"""Prompt assembly: what a prompt section reads (``PromptInputs``), the system prompt built from
the sections (frozen per session), and the conversation tail sent as history."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.messages import Message

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store
    from core.store.sessions import Session, StoredMessage


@dataclass(frozen=True)
class PromptInputs:
    store: Store
    settings: Settings
    user_id: str
    session: Session
    platform: str
    first_message: str


PromptSection = Callable[[PromptInputs], str | None]


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
