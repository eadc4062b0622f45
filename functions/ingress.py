"""Ingress: record an inbound message once and make sure a worker will drain its chat."""

from __future__ import annotations

from dataclasses import dataclass

from core.dispatch import ChatRef
from core.messages import InboundMessage
from core.store.inbox import InboxEntry
from functions.runtime import Runtime


@dataclass(frozen=True)
class Received:
    user_id: str
    entry_id: int
    duplicate: bool
    entry: InboxEntry | None = None  # the stored entry, for duplicates


async def receive(rt: Runtime, message: InboundMessage, *, owner: str | None = None) -> Received:
    """Store ``message`` in its owner's inbox (owner: the sender's user, or a group's scope) and
    dispatch a drain. A retried delivery is a no-op, apart from nudging a stalled chat."""
    store = rt.store
    user_id = owner or store.users.for_account(message.account, display_name=message.display_name)
    entry_id = store.inbox.add(user_id, message)
    chat = ChatRef(user_id, message.chat_key)
    if entry_id is not None:
        await rt.dispatcher.drain(chat)
        return Received(user_id=user_id, entry_id=entry_id, duplicate=False)
    existing = store.inbox.find(user_id, message.platform, message.platform_message_id)
    if existing is None:
        raise LookupError("duplicate delivery recorded for another owner")
    if not existing.finished:
        await rt.dispatcher.drain(chat)
    return Received(user_id=user_id, entry_id=existing.id, duplicate=True, entry=existing)
