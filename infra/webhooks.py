"""Where the HTTP API and the platforms (Telegram, Slack, WhatsApp, Discord, email) reach a
deployment."""

from __future__ import annotations

import secrets

TELEGRAM_PATH = "/telegram/webhook"
SLACK_PATH = "/slack/events"
WHATSAPP_PATH = "/whatsapp/webhook"
DISCORD_PATH = "/discord/interactions"
EMAIL_PATH = "/email/inbound"
TEAMS_PATH = "/teams/messages"
GOOGLECHAT_PATH = "/googlechat/events"
LINE_PATH = "/line/webhook"
SMS_PATH = "/sms/webhook"
MATRIX_PATH = "/_matrix/app/v1/transactions/{txnId}"
HTTP_API_PATH = "/v1/chat/completions"
HEALTH_PATH = "/healthz"


def endpoints(base_url: str) -> dict[str, str]:
    base = base_url.rstrip("/")
    return {
        "HTTP API": base + HTTP_API_PATH,
        "Telegram webhook": base + TELEGRAM_PATH,
        "Slack events": base + SLACK_PATH,
        "WhatsApp webhook": base + WHATSAPP_PATH,
        "Discord endpoint": base + DISCORD_PATH,
        "Email inbound": base + EMAIL_PATH,
        "Teams messaging endpoint": base + TEAMS_PATH,
        "Google Chat endpoint": base + GOOGLECHAT_PATH,
        "LINE webhook": base + LINE_PATH,
        "SMS webhook (Twilio)": base + SMS_PATH,
        "Matrix application service (registration url)": base,
        "Health": base + HEALTH_PATH,
    }


def new_telegram_secret() -> str:
    """A value for Telegram's ``secret_token``: 1-256 characters of A-Z, a-z, 0-9, _ and -."""
    return secrets.token_urlsafe(32)
