"""The platform senders a runtime gets from its settings. Building one imports nothing heavy:
each client library is imported on its first send."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.config import Settings
    from core.platforms.delivery import Sender


def default_senders(settings: Settings) -> dict[str, Sender]:
    senders: dict[str, Sender] = {}
    telegram_token = settings.secret("telegram_token")
    if telegram_token:
        from core.platforms.telegram import TelegramSender

        senders["telegram"] = TelegramSender(telegram_token, settings.telegram_api_base)
    slack_token = settings.secret("slack_bot_token")
    if slack_token:
        from core.platforms.slack import SlackSender

        senders["slack"] = SlackSender(slack_token, settings.slack_api_base)
    return senders
