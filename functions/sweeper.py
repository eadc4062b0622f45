"""The sweeper: resume chats whose worker died and send replies whose delivery is due.
Runs on every cron tick and when the emulator starts."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core.dispatch import ChatRef
from functions.runtime import Runtime
from functions.worker import lease_name

log = logging.getLogger("iris.sweeper")

GRACE_SECONDS = 2.0


@dataclass(frozen=True)
class SweepReport:
    chats_resumed: int
    deliveries_attempted: int
    leases_expired: int


async def sweep(rt: Runtime) -> SweepReport:
    store = rt.store
    expired = store.leases.sweep_expired()
    resumed = 0
    stalled = store.inbox.stalled_chats(older_than=store.clock.now() - GRACE_SECONDS)
    for user_id, chat_key in stalled:
        chat = ChatRef(user_id, chat_key)
        if store.leases.holder(lease_name(chat)) is None:
            await rt.dispatcher.drain(chat)
            resumed += 1
    attempted = await rt.delivery.sweep()
    if resumed or attempted:
        log.info("sweep: resumed %d chats, attempted %d deliveries", resumed, attempted)
    return SweepReport(resumed, attempted, expired)
