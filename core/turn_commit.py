"""A turn's results and their commit: the messages, usage, the inbox entry's end and the reply
to deliver are stored in one transaction, or not at all.

The worker builds a ``TurnRecord`` once a turn has run (or been given up) and calls
``commit_turn``; the SQL stays in the store's repositories.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.messages import Message, Usage

if TYPE_CHECKING:
    from core.store import Store
    from core.store.inbox import InboxEntry


class TurnAlreadyFinished(Exception):
    """Another worker finished this inbox entry first; this turn's results were discarded."""


@dataclass(frozen=True)
class OutboundReply:
    platform: str
    target: dict[str, Any]
    text: str
    chat_key: str | None = None  # the chat it goes to, when not the entry's own (cron jobs)


@dataclass(frozen=True)
class TurnRecord:
    entry: InboxEntry
    session_id: str
    messages: list[Message]
    usage: list[Usage] = field(default_factory=list)
    reply: str | None = None
    status: str = "done"
    error: str | None = None
    outbound: OutboundReply | None = None


def commit_turn(store: Store, record: TurnRecord) -> int | None:
    """Store a turn's messages and usage, mark its inbox entry finished and record the reply
    to deliver, all in one transaction. Returns the delivery id (None when nothing is sent).
    Raises TurnAlreadyFinished (and stores nothing) if the entry was finished meanwhile."""
    entry = record.entry
    at = store.clock.now()
    with store.transaction():
        if not store.inbox.finish(
            entry.user_id, entry.id, status=record.status, session_id=record.session_id,
            reply=record.reply, error=record.error,
        ):
            raise TurnAlreadyFinished(f"inbox entry {entry.id} is already finished")
        store.messages.insert(
            entry.user_id, record.session_id, record.messages, at=at,
            author=entry.message.account, inbox_id=entry.id,
        )
        for usage in record.usage:
            store.usage.record(entry.user_id, usage, session_id=record.session_id,
                               inbox_id=entry.id)
        store.sessions.touch(entry.user_id, record.session_id, at=at)
        if record.outbound is None:
            return None
        return store.deliveries.add(
            entry.user_id, source=f"inbox:{entry.id}", platform=record.outbound.platform,
            chat_key=record.outbound.chat_key or entry.chat_key, target=record.outbound.target,
            text=record.outbound.text,
        )
