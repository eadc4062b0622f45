"""A turn's results and their commit: the messages, usage, the inbox entry's end and the reply
to deliver are stored in one transaction, or not at all.

The worker builds a ``TurnRecord`` once a turn has run (or been given up) and calls
``record_turn``; the SQL stays in the store's repositories.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.contracts.outcome import OutboundReply
from core.messages import Message, Usage
from core.store.db import NotApplied
from core.store.deliveries import Delivery

if TYPE_CHECKING:
    from core.store import Store
    from core.store.inbox import InboxEntry


class TurnAlreadyFinished(Exception):
    """Another worker finished this inbox entry first; this turn's results were discarded."""


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


def record_turn(
    store: Store, record: TurnRecord, *, claim: tuple[str, float] | None = None
) -> Delivery | None:
    """Store a turn's messages and usage, mark its inbox entry finished and record the reply
    to deliver, all in one transaction; returns the delivery (None when nothing is sent).
    Raises TurnAlreadyFinished (and stores nothing) if the entry was finished meanwhile. With
    ``claim`` (owner, seconds) the delivery is recorded already claimed by that owner, so the
    sender can go at once.

    One round trip to a remote database, which holds its write lock for no longer than the
    statements take: the inbox entry's end is the guard (it must change exactly one row, or
    nothing commits), and the delivery is read back after the commit by its source, which is
    unique. No delivery for this entry can exist before: the only other writer of an
    ``inbox:`` source (``/stop``) finishes its entry in the same transaction."""
    entry = record.entry
    at = store.clock.now()
    statements = [
        store.inbox.finish_statement(
            entry.user_id, entry.id, status=record.status, session_id=record.session_id,
            reply=record.reply, error=record.error,
        ),
        *store.messages.insert_statements(
            entry.user_id, record.session_id, record.messages, at=at,
            author=entry.message.account, inbox_id=entry.id,
        ),
        *(store.usage.record_statement(entry.user_id, usage, session_id=record.session_id,
                                       inbox_id=entry.id) for usage in record.usage),
        store.sessions.touch_statement(entry.user_id, record.session_id, at=at),
    ]
    reads = []
    if record.outbound is not None:
        source = f"inbox:{entry.id}"
        statements.append(store.deliveries.add_statement(
            entry.user_id, source=source, platform=record.outbound.platform,
            chat_key=record.outbound.chat_key or entry.chat_key, target=record.outbound.target,
            text=record.outbound.text, claim=claim, returning=False,
        ))
        reads.append(store.deliveries.for_source_statement(entry.user_id, source))
    try:
        _, found = store.db.write_then_read(statements, reads, guard=0)
    except NotApplied:
        raise TurnAlreadyFinished(f"inbox entry {entry.id} is already finished") from None
    if not found or not found[0]:
        return None
    return Delivery.from_row(found[0][0])
