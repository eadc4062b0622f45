"""Ingress: record an inbound message once and make sure a worker will drain its chat."""

from __future__ import annotations

from dataclasses import dataclass

from core.contracts.dispatch import ChatRef
from core.lanes import in_store_lane
from core.messages import InboundMessage
from core.store.inbox import InboxEntry
from core.turn.cancel import is_stop, request_stop
from functions.runtime import Runtime


@dataclass(frozen=True)
class Received:
    user_id: str
    entry_id: int
    duplicate: bool
    entry: InboxEntry | None = None  # the stored entry, for duplicates
    delivery_id: int | None = None  # an answer given at ingress (/stop), to send at once


async def receive(rt: Runtime, message: InboundMessage, *, owner: str | None = None) -> Received:
    """Store ``message`` in its owner's inbox (owner: the sender's user, or a group's scope) and
    dispatch a drain. A retried delivery is a no-op, apart from nudging a stalled chat. The
    database calls run in the ``store`` lane, off the event loop."""
    # fair per sender: before the owner is known, the lane keys the work by the account
    received, drain = await in_store_lane(owner or message.account, record, rt, message, owner)
    if drain:
        await rt.dispatcher.drain(ChatRef(received.user_id, message.chat_key))
    return received


def record(rt: Runtime, message: InboundMessage, owner: str | None) -> tuple[Received, bool]:
    """``receive``'s database work: what was recorded, and whether the chat needs a drain."""
    store = rt.store
    user_id = owner or store.users.for_account(message.account, display_name=message.display_name)
    if is_stop(message.text):
        stopped = request_stop(store, user_id, message)
        entry = store.inbox.get(user_id, stopped.entry_id) if stopped.duplicate else None
        return Received(user_id=user_id, entry_id=stopped.entry_id, duplicate=stopped.duplicate,
                        entry=entry, delivery_id=stopped.delivery_id), False
    entry_id = store.inbox.add(user_id, message)
    if entry_id is not None:
        return Received(user_id=user_id, entry_id=entry_id, duplicate=False), True
    existing = store.inbox.find(user_id, message.platform, message.platform_message_id)
    if existing is None:
        raise LookupError("duplicate delivery recorded for another owner")
    return (Received(user_id=user_id, entry_id=existing.id, duplicate=True, entry=existing),
            not existing.finished)
