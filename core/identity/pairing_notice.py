"""Telling the owners that pairing requests are being dropped (the platform's slots are full).

One notice per owner and platform per ``NOTICE_SECONDS`` on the store's clock, sent as a
delivery to the owner's latest private chat (on the same platform when there is one), like
any reply. Owners who never talked to Iris on a platform it can push to are not reachable:
the drop is logged instead.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.errors import NotFound
from core.platforms.registry import PLATFORMS

if TYPE_CHECKING:
    from core.config import Settings
    from core.identity.pairing import PairingRequest
    from core.platforms.spec import ChatAddress
    from core.store import Store

log = logging.getLogger("iris.pairing")

NOTICE_SECONDS = 3600.0
SCAN_LIMIT = 200


def notice_text(platform: str, dropped: PairingRequest, cap: int) -> str:
    who = f"{dropped.display_name} ({dropped.account})" if dropped.display_name else (
        dropped.account)
    return (
        f"Pairing requests on {platform} are being dropped: {cap} were already waiting, so the "
        f"oldest ({who}, code {dropped.code}) expired to make room for a new one. If you expect "
        "someone, list the waiting codes with `iris pairing list`; if you don't know these "
        "people, do nothing (codes expire after an hour). I'll say this at most once an hour."
    )


def _owner_chat(store: Store, user_id: str, platform: str) -> tuple[str, ChatAddress] | None:
    """The owner's latest private chat on ``platform``, else on any platform Iris pushes to."""
    for platforms in ((platform,), PLATFORMS.push_names()):
        pushable = tuple(p for p in platforms if PLATFORMS[p].chat_address is not None)
        if not pushable:
            continue
        messages = store.inbox.latest_messages(user_id, platforms=pushable, limit=SCAN_LIMIT)
        for message in messages:
            address = PLATFORMS[message.platform].chat_address
            if not message.is_group and message.cron is None and address is not None:
                return message.platform, address(message)
    return None


def tell_owners(
    store: Store, settings: Settings, platform: str, dropped: PairingRequest, cap: int
) -> list[tuple[str, int]]:
    """Record a notice for each reachable owner not told within ``NOTICE_SECONDS``; returns
    the (user_id, delivery_id) pairs to send now."""
    at = store.clock.now()
    window = int(at // NOTICE_SECONDS)
    sent: list[tuple[str, int]] = []
    told: set[str] = set()
    reached = False
    for account in settings.owner_accounts:
        try:
            user_id = store.users.resolve(account)
        except NotFound:
            continue
        if user_id in told:
            continue
        told.add(user_id)
        source = f"pairing-full:{platform}:{user_id}"
        before = store.deliveries.for_source(user_id, f"{source}:{window - 1}")
        if before is not None and before.created_at > at - NOTICE_SECONDS:
            reached = True
            continue
        found = _owner_chat(store, user_id, platform)
        if found is None:
            continue
        where, chat = found
        reached = True
        delivery_id = store.deliveries.add(
            user_id, source=f"{source}:{window}", platform=where, chat_key=chat.chat_key,
            target=chat.address, text=notice_text(platform, dropped, cap),
        )
        if delivery_id is not None:
            sent.append((user_id, delivery_id))
    if not reached:
        log.warning("pairing requests on %s are being dropped and no owner can be told "
                    "(set owner_accounts and message Iris once from that account)", platform)
    return sent
