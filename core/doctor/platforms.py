"""``iris doctor``'s checks of the WhatsApp, Discord, email, Teams and Google Chat settings:
what is half set, and what does not look like the value the platform hands out; with
``--online``, Telegram's own view of the webhook (``check_online``). Nothing else here calls
the platforms."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.config import Settings
    from core.doctor.report import Report


def _missing(settings: Settings, names: dict[str, str]) -> tuple[list[str], list[str]]:
    have = [env for field, env in names.items() if getattr(settings, field) is not None]
    lack = [env for field, env in names.items() if getattr(settings, field) is None]
    return have, lack


WHATSAPP = {"whatsapp_token": "IRIS_WHATSAPP_TOKEN",
            "whatsapp_app_secret": "IRIS_WHATSAPP_APP_SECRET",
            "whatsapp_phone_number_id": "IRIS_WHATSAPP_PHONE_NUMBER_ID",
            "whatsapp_verify_token": "IRIS_WHATSAPP_VERIFY_TOKEN"}
DISCORD = {"discord_public_key": "IRIS_DISCORD_PUBLIC_KEY",
           "discord_application_id": "IRIS_DISCORD_APPLICATION_ID",
           "discord_bot_token": "IRIS_DISCORD_BOT_TOKEN"}
TEAMS = {"teams_app_id": "IRIS_TEAMS_APP_ID", "teams_app_password": "IRIS_TEAMS_APP_PASSWORD"}
GOOGLECHAT = {"googlechat_audience": "IRIS_GOOGLECHAT_AUDIENCE",
              "googlechat_service_account": "IRIS_GOOGLECHAT_SERVICE_ACCOUNT"}
LINE = {"line_channel_secret": "IRIS_LINE_CHANNEL_SECRET",
        "line_channel_access_token": "IRIS_LINE_CHANNEL_ACCESS_TOKEN"}
SMS = {"twilio_account_sid": "IRIS_TWILIO_ACCOUNT_SID",
       "twilio_auth_token": "IRIS_TWILIO_AUTH_TOKEN",
       "twilio_from_number": "IRIS_TWILIO_FROM_NUMBER"}
MATRIX = {"matrix_homeserver_url": "IRIS_MATRIX_HOMESERVER_URL",
          "matrix_user_id": "IRIS_MATRIX_USER_ID",
          "matrix_hs_token": "IRIS_MATRIX_HS_TOKEN",
          "matrix_as_token": "IRIS_MATRIX_AS_TOKEN"}
EMAIL_OUT = {"email_smtp_url": "IRIS_EMAIL_SMTP_URL", "email_from": "IRIS_EMAIL_FROM"}


def check(report: Report, settings: Settings) -> None:
    _group(report, settings, "whatsapp", WHATSAPP,
           "Meta for Developers → your app → WhatsApp → API Setup (token, phone number id) and "
           "App settings → Basic (app secret); `iris setup` generates the verify token")
    _whatsapp_template(report, settings)
    _group(report, settings, "discord", DISCORD,
           "Discord Developer Portal → your app → General Information (application id, public "
           "key) and Bot (token)")
    _email(report, settings)
    _group(report, settings, "teams", TEAMS,
           "Azure portal → your Azure Bot → Configuration (Microsoft App ID) and the app "
           "registration's Certificates & secrets (client secret)")
    _group(report, settings, "googlechat", GOOGLECHAT,
           "Google Cloud console → Google Chat API → Configuration (authentication audience: "
           "the project number or the app URL) and a service account's JSON key")
    _googlechat_account(report, settings)
    _group(report, settings, "line", LINE,
           "LINE Developers Console → your Messaging API channel → Basic settings (channel "
           "secret) and Messaging API (channel access token)")
    _sms(report, settings)
    _group(report, settings, "matrix", MATRIX,
           "the application service registration YAML (hs_token, as_token, sender_localpart) "
           "and your homeserver's URL (docs/platforms.md, Matrix)")


def _sms(report: Report, settings: Settings) -> None:
    """Twilio signs each webhook for the URL it calls: without the public URL no signature can
    be checked, so it belongs to the SMS settings once any of them is set."""
    have, lack = _missing(settings, SMS)
    if not have:
        return
    if settings.public_url is None:
        lack.append("IRIS_PUBLIC_URL")
    if lack:
        report.add("error", "sms", f"{', '.join(lack)} not set (but {', '.join(have)} is)",
                   "Twilio Console → Account info (SID, auth token) and Phone Numbers (the "
                   "number); IRIS_PUBLIC_URL is the https URL Twilio calls (docs/platforms.md)")
    else:
        report.add("ok", "sms", "all settings present")


def _group(report: Report, settings: Settings, name: str, names: dict[str, str],
           fix: str) -> None:
    have, lack = _missing(settings, names)
    if not have:
        return
    if lack:
        report.add("error", name, f"{', '.join(lack)} not set (but {', '.join(have)} is)", fix)
    else:
        report.add("ok", name, "all settings present")


def _whatsapp_template(report: Report, settings: Settings) -> None:
    _, lack = _missing(settings, WHATSAPP)
    if lack:
        return
    if settings.whatsapp_template:
        name, _, language = settings.whatsapp_template.partition(":")
        report.add("ok", "whatsapp template", f"{name} ({language}) reopens chats outside the "
                   "24-hour window; replies wait until the person writes back")
    else:
        report.add("ok", "whatsapp template", "none: a cron delivery more than 24 hours after "
                   "the person last wrote is recorded undeliverable",
                   "approve a utility template with one body parameter in WhatsApp Manager and "
                   "set IRIS_WHATSAPP_TEMPLATE=name:language (docs/platforms.md)")


def _googlechat_account(report: Report, settings: Settings) -> None:
    raw = settings.secret("googlechat_service_account")
    if not raw:
        return
    from core.errors import IrisUsageError
    from core.platforms.googlechat import service_account

    try:
        service_account(raw)
    except IrisUsageError as exc:
        report.add("error", "googlechat service account", str(exc),
                   "IAM & Admin → Service accounts → Keys → Add key (JSON)")


def _email(report: Report, settings: Settings) -> None:
    have, lack = _missing(settings, EMAIL_OUT)
    inbound = settings.email_inbound_secret is not None or (
        settings.email_mailgun_signing_key is not None)
    if not have and not inbound:
        return
    if lack:
        report.add("error", "email", f"{', '.join(lack)} not set: Iris cannot send replies",
                   "iris setup --non-interactive --email-smtp-url smtp://USER:PASS@HOST:587 "
                   "--email-from iris@YOUR-DOMAIN")
        return
    from core.errors import ConfigError
    from core.platforms.mail import parse_smtp_url

    try:
        server = parse_smtp_url(settings.secret("email_smtp_url") or "")
    except ConfigError as exc:
        report.add("error", "email", str(exc), "smtp://user:pass@host:587 or smtps://…:465")
        return
    if not inbound:
        report.add("warning", "email", "no inbound route: set IRIS_EMAIL_INBOUND_SECRET (raw "
                   "RFC 822 posts) or IRIS_EMAIL_MAILGUN_SIGNING_KEY (Mailgun routes)",
                   "iris setup --non-interactive --email-inbound-secret … (or generate one)")
    elif not server.implicit_tls and not server.loopback:
        report.add("ok", "email", f"SMTP {server.host}:{server.port} (STARTTLS required)")
    else:
        report.add("ok", "email", f"SMTP {server.host}:{server.port}")


def check_online(report: Report, settings: Settings) -> None:
    """Telegram's ``getWebhookInfo``: a warning when no webhook is set, when the registration
    leaves out an update type Iris handles (Telegram never sends it), or when Telegram's last
    delivery failed."""
    token = settings.secret("telegram_token")
    if not token:
        return
    import asyncio

    from core.platforms.telegram import TelegramSender
    from core.platforms.telegram_webhook import FIX, TelegramWebhook, read_webhook

    async def read() -> TelegramWebhook:
        sender = TelegramSender(token, settings.telegram_api_base)
        try:
            return await read_webhook(sender)
        finally:
            if sender._bot is not None:
                await sender._bot.shutdown()

    hook = asyncio.run(read())
    if hook.problem:
        report.add("error", "telegram webhook", hook.problem, "check IRIS_TELEGRAM_TOKEN")
    elif not hook.url:
        report.add("warning", "telegram webhook", "no webhook set: Telegram keeps the bot's "
                   "updates to itself", "iris telegram set-webhook URL")
    elif hook.missing_warning:
        report.add("warning", "telegram webhook", hook.missing_warning, FIX)
    elif hook.last_error:
        report.add("warning", "telegram webhook", f"{hook.url}: last delivery failed: "
                   f"{hook.last_error}", "check that Iris answers at that address")
    else:
        kinds = ", ".join(hook.allowed_updates) or "Telegram's default update types"
        report.add("ok", "telegram webhook", f"{hook.url} ({kinds})")
