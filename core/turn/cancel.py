"""``/stop``, answered at ingress: the running worker holds the chat's lease, so a ``/stop``
queued in the inbox would wait behind the very turn it should stop. It is recorded as a
finished inbox entry (a retried delivery stays a no-op), the chat's running or next turn is
marked cancelled in the database (seen by a worker in any container between its steps), and the
answer is a delivery row sent at once. Nothing here imports the turn machinery."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.platforms.registry import PLATFORMS

if TYPE_CHECKING:
    from core.messages import InboundMessage
    from core.store import Store

STOP = re.compile(r"^\s*/stop(?:@\S+)?\s*$", re.IGNORECASE)
STOPPING = "Stopping: I'll end the current turn after the step it is on."
NOTHING = "Nothing is running right now."


def is_stop(text: str) -> bool:
    return bool(STOP.match(text))


@dataclass(frozen=True)
class Stopped:
    entry_id: int
    duplicate: bool
    delivery_id: int | None = None  # the answer, when the platform takes pushes


def request_stop(store: Store, user_id: str, message: InboundMessage) -> Stopped:
    with store.transaction():
        existing = store.inbox.find(user_id, message.platform, message.platform_message_id)
        if existing is not None:
            return Stopped(existing.id, duplicate=True)
        cancelled = store.cancels.request_current(user_id, message.chat_key, by=message.account)
        reply = STOPPING if cancelled is not None else NOTHING
        entry_id = store.inbox.add(user_id, message)
        if entry_id is None:
            raise LookupError("duplicate /stop recorded for another owner")
        store.inbox.finish(user_id, entry_id, status="done", session_id=None, reply=reply)
        spec = PLATFORMS[message.platform]
        if not spec.push:
            return Stopped(entry_id, duplicate=False)
        delivery_id = store.deliveries.add(
            user_id, source=f"inbox:{entry_id}", platform=spec.name,
            chat_key=message.chat_key, target=spec.reply_address(message), text=reply,
        )
    return Stopped(entry_id, duplicate=False, delivery_id=delivery_id)
