"""The owner's platforms page: each platform with a webhook, whether it is configured, when it
last delivered a message, and its deliveries in trouble; Telegram's own view of the webhook."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.platforms.registry import PLATFORMS

if TYPE_CHECKING:
    from core.platforms.delivery import Sender
    from core.store import Store

WEBHOOK_INFO_SECONDS = 10.0


@dataclass(frozen=True)
class PlatformState:
    name: str
    configured: bool
    last_received: float | None
    retrying: int
    given_up: int


@dataclass(frozen=True)
class TelegramWebhook:
    url: str
    pending_updates: int
    last_error: str | None
    last_error_at: float | None
    problem: str | None = None  # the call itself failed


def platform_states(store: Store, senders: Mapping[str, Sender]) -> list[PlatformState]:
    """Blocking (store reads): run it off the event loop."""
    troubled = store.deliveries.trouble_counts()
    states = []
    for spec in PLATFORMS:
        if spec.webhook is None:
            continue
        retrying, given_up = troubled.get(spec.name, (0, 0))
        states.append(PlatformState(
            name=spec.name, configured=spec.name in senders,
            last_received=store.inbox.platform_last_received(spec.name),
            retrying=retrying, given_up=given_up,
        ))
    return states


async def telegram_webhook(senders: Mapping[str, Sender]) -> TelegramWebhook | None:
    """Telegram's ``getWebhookInfo`` through the configured bot; None when Telegram is not
    configured, a ``problem`` when the call fails."""
    sender: Any = senders.get("telegram")
    if sender is None or not hasattr(sender, "bot"):
        return None
    try:
        bot = await sender.bot()
        info = await asyncio.wait_for(bot.get_webhook_info(), WEBHOOK_INFO_SECONDS)
    except Exception as exc:
        return TelegramWebhook(url="", pending_updates=0, last_error=None, last_error_at=None,
                               problem=f"getWebhookInfo failed: {type(exc).__name__}: "
                                       f"{str(exc)[:200]}")
    when = info.last_error_date
    return TelegramWebhook(
        url=info.url or "", pending_updates=int(info.pending_update_count or 0),
        last_error=info.last_error_message,
        last_error_at=when.timestamp() if when is not None else None,
    )
