"""The owner's platforms page: each platform with a webhook, whether it is configured, when it
last delivered a message, and its deliveries in trouble; Telegram's own view of the webhook."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.platforms.registry import PLATFORMS
from core.platforms.telegram_webhook import TelegramWebhook, read_webhook

if TYPE_CHECKING:
    from core.contracts.senders import Sender
    from core.store import Store

__all__ = ["PlatformState", "TelegramWebhook", "platform_states", "telegram_webhook"]


@dataclass(frozen=True)
class PlatformState:
    name: str
    configured: bool
    last_received: float | None
    retrying: int
    given_up: int


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
    return await read_webhook(sender)
