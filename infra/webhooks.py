"""Where Telegram and Slack reach a deployment, and registering the Telegram webhook."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from core.config import Settings

TELEGRAM_PATH = "/telegram/webhook"
SLACK_PATH = "/slack/events"
HTTP_API_PATH = "/v1/chat/completions"
HEALTH_PATH = "/healthz"
SLACK_BOT_EVENTS = ("app_mention", "message.im", "message.channels", "message.groups")
SLACK_SCOPES = ("app_mentions:read", "chat:write", "im:history", "channels:history",
                "groups:history", "files:read", "reactions:write")


class WebhookError(Exception):
    """The platform refused the webhook; the message is the platform's."""


def endpoints(base_url: str) -> dict[str, str]:
    base = base_url.rstrip("/")
    return {
        "HTTP API": base + HTTP_API_PATH,
        "Telegram webhook": base + TELEGRAM_PATH,
        "Slack events": base + SLACK_PATH,
        "Health": base + HEALTH_PATH,
    }


def new_telegram_secret() -> str:
    """A value for Telegram's ``secret_token``: 1-256 characters of A-Z, a-z, 0-9, _ and -."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class TelegramWebhook:
    bot_username: str
    url: str
    pending_updates: int


async def register_telegram(settings: Settings, base_url: str) -> TelegramWebhook:
    """``setWebhook`` to the deployment with the configured secret token, then read it back."""
    from telegram import Bot
    from telegram.error import TelegramError

    token, secret = settings.secret("telegram_token"), settings.secret("telegram_secret")
    if not token or not secret:
        raise WebhookError("IRIS_TELEGRAM_TOKEN and IRIS_TELEGRAM_SECRET must both be set")
    url = base_url.rstrip("/") + TELEGRAM_PATH
    api = settings.telegram_api_base.rstrip("/")
    bot = Bot(token, base_url=f"{api}/bot", base_file_url=f"{api}/file/bot")
    try:
        async with bot:
            await bot.set_webhook(url=url, secret_token=secret, drop_pending_updates=False)
            info = await bot.get_webhook_info()
            me = bot.bot.username
    except TelegramError as exc:
        raise WebhookError(f"Telegram refused the webhook: {exc.message}") from exc
    if info.url != url:
        raise WebhookError(f"Telegram reports the webhook as {info.url!r}, not {url!r}")
    return TelegramWebhook(bot_username=me, url=url, pending_updates=info.pending_update_count)


def slack_instructions(base_url: str) -> str:
    """Slack has no API to set an app's Request URL: what to paste where."""
    url = base_url.rstrip("/") + SLACK_PATH
    events = "\n".join(f"      - {event}" for event in SLACK_BOT_EVENTS)
    scopes = "\n".join(f"      - {scope}" for scope in SLACK_SCOPES)
    return (
        f"Slack: in https://api.slack.com/apps → your app → Event Subscriptions, set the Request "
        f"URL to\n  {url}\n(Slack sends a challenge; Iris answers it). Or create the app from "
        "this manifest (App Manifest → YAML):\n\n"
        "display_information:\n  name: Iris\n"
        "features:\n  bot_user:\n    display_name: Iris\n    always_online: true\n"
        "oauth_config:\n  scopes:\n    bot:\n"
        f"{scopes}\n"
        "settings:\n  event_subscriptions:\n"
        f"    request_url: {url}\n    bot_events:\n{events}\n"
        "  org_deploy_enabled: false\n  socket_mode_enabled: false\n"
        "\nThen install the app to your workspace and put its Bot User OAuth Token (xoxb-…) and "
        "Signing Secret in .env (`iris setup`), and `iris deploy --push-secret`."
    )
