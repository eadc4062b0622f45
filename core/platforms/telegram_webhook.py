"""Telegram's own view of Iris' webhook (``getWebhookInfo``), for the dashboard's Platforms
page and ``iris doctor --online``: where updates go, what waits, the last delivery error, and
the update types Iris handles that the registration leaves out (Telegram never sends those)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from core.platforms.telegram_inbound import missing_updates

WEBHOOK_INFO_SECONDS = 10.0
FIX = "iris telegram set-webhook URL (or iris deploy --telegram) registers them"


@dataclass(frozen=True)
class TelegramWebhook:
    url: str
    pending_updates: int
    last_error: str | None
    last_error_at: float | None
    problem: str | None = None  # the call itself failed
    allowed_updates: tuple[str, ...] = ()  # empty: Telegram's default set
    missing_updates: tuple[str, ...] = ()  # handled by Iris, never sent by Telegram

    @property
    def missing_warning(self) -> str | None:
        if not self.url or not self.missing_updates:
            return None
        return (f"the webhook is registered without {', '.join(self.missing_updates)}: "
                "Telegram never sends them (clarify buttons would never answer)")


async def read_webhook(sender: Any) -> TelegramWebhook:
    """``getWebhookInfo`` through the sender's bot; a ``problem`` when the call fails."""
    try:
        bot = await sender.bot()
        info = await asyncio.wait_for(bot.get_webhook_info(), WEBHOOK_INFO_SECONDS)
    except Exception as exc:
        return TelegramWebhook(url="", pending_updates=0, last_error=None, last_error_at=None,
                               problem=f"getWebhookInfo failed: {type(exc).__name__}: "
                                       f"{str(exc)[:200]}")
    when = info.last_error_date
    allowed = tuple(info.allowed_updates or ())
    return TelegramWebhook(
        url=info.url or "", pending_updates=int(info.pending_update_count or 0),
        last_error=info.last_error_message,
        last_error_at=when.timestamp() if when is not None else None,
        allowed_updates=allowed, missing_updates=tuple(missing_updates(allowed)),
    )
