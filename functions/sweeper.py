"""The sweeper: resume chats whose worker died, send replies whose delivery is due, and delete
email attachments kept longer than ``email_attachment_days``. Runs on every cron tick and when
the emulator starts."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from core.contracts.dispatch import ChatRef
from core.lanes import blocking, in_store_lane
from core.platforms.email_retention import expire_attachments
from functions.runtime import Runtime
from functions.worker import lease_name

log = logging.getLogger("iris.sweeper")

GRACE_SECONDS = 2.0


@dataclass(frozen=True)
class SweepReport:
    chats_resumed: int
    deliveries_attempted: int
    leases_expired: int
    attachments_expired: int = 0


def _stalled(store: Any) -> list[ChatRef]:
    """Chats with a pending entry older than the grace period that no worker holds."""
    stalled = store.inbox.stalled_chats(older_than=store.clock.now() - GRACE_SECONDS)
    chats = [ChatRef(user_id, chat_key) for user_id, chat_key in stalled]
    return [chat for chat in chats if store.leases.holder(lease_name(chat)) is None]


async def sweep(rt: Runtime) -> SweepReport:
    store = rt.store
    expired = await in_store_lane(None, store.leases.sweep_expired)
    resumed = 0
    for chat in await in_store_lane(None, _stalled, store):
        await rt.dispatcher.drain(chat)
        resumed += 1
    attempted = await rt.delivery.sweep()
    try:
        attachments = await blocking(
            "io", "sweep:attachments", expire_attachments, store,
            rt.settings.email_attachment_days, what="expiring email attachments",
        )
    except Exception:  # a broken object store must not stop the rest of the tick
        log.exception("sweep: expiring email attachments failed")
        attachments = 0
    if resumed or attempted or attachments:
        log.info("sweep: resumed %d chats, attempted %d deliveries, deleted %d expired email "
                 "attachments", resumed, attempted, attachments)
    return SweepReport(resumed, attempted, expired, attachments)
