"""What ``iris deploy --whatsapp/--discord/--email`` prints once the app is up: the URL to paste
in each platform's console and the values that go with it (Discord's commands are registered
by ``iris deploy`` through ``iris discord register-commands``)."""

from __future__ import annotations

from core.config import Settings

__all__ = ["setup_lines"]


def setup_lines(settings: Settings, base_url: str, name: str) -> list[str]:
    base = base_url.rstrip("/")
    if name == "whatsapp":
        token = settings.secret("whatsapp_verify_token") or "(IRIS_WHATSAPP_VERIFY_TOKEN)"
        return [
            "WhatsApp: Meta for Developers → your app → WhatsApp → Configuration → Webhook:",
            f"  Callback URL:  {base}/whatsapp/webhook",
            f"  Verify token:  {token}",
            "  then subscribe the webhook field 'messages'.",
        ]
    if name == "discord":
        return [
            "Discord: Developer Portal → your app → General Information → Interactions "
            "Endpoint URL:",
            f"  {base}/discord/interactions",
            "  (Discord checks it with a signed PING when you save; Iris answers PONG.)",
        ]
    if name == "teams":
        return [
            "Teams: Azure portal → your Azure Bot → Configuration → Messaging endpoint:",
            f"  {base}/teams/messages",
            "  then Channels → Microsoft Teams; install the bot's app package in Teams.",
        ]
    if name == "googlechat":
        audience = settings.googlechat_audience or "(IRIS_GOOGLECHAT_AUDIENCE)"
        kind = "App URL" if audience.startswith("https://") else "Project Number"
        return [
            "Google Chat: Cloud console → Google Chat API → Configuration → Connection "
            "settings → HTTP endpoint URL:",
            f"  {base}/googlechat/events",
            f"  Authentication audience: {kind} ({audience})",
        ]
    if name == "line":
        return [
            "LINE: LINE Developers Console → your Messaging API channel → Messaging API → "
            "Webhook settings:",
            f"  Webhook URL:  {base}/line/webhook",
            "  then turn on 'Use webhook' and press Verify (Iris answers the empty, signed "
            "request with 200); turn off auto-reply and greeting messages in the Official "
            "Account Manager.",
        ]
    if name == "matrix":
        localpart = (settings.matrix_user_id or "@iris:").split(":", 1)[0].lstrip("@")
        return [
            "Matrix: in the application service registration YAML your homeserver loads "
            "(docs/platforms.md, Matrix), set",
            f"  url: {base}",
            f"  sender_localpart: {localpart}",
            "  hs_token / as_token: IRIS_MATRIX_HS_TOKEN / IRIS_MATRIX_AS_TOKEN",
            "  then restart the homeserver and invite the user to a room.",
        ]
    if name == "sms":
        public = (settings.public_url or base).rstrip("/")
        lines = [
            "SMS: Twilio Console → Phone Numbers → your number → Messaging configuration → "
            "A message comes in: Webhook, HTTP POST:",
            f"  {public}/sms/webhook",
        ]
        if public != base:
            lines.append(f"  (IRIS_PUBLIC_URL; it must reach this deployment at {base}, and "
                         "Twilio's signature covers exactly this URL.)")
        return lines
    lines = ["Email: point your provider's inbound route at"]
    if settings.email_mailgun_signing_key is not None:
        lines.append(f"  Mailgun route action: forward(\"{base}/email/inbound\")")
    if settings.email_inbound_secret is not None:
        lines.append(f"  raw RFC 822 POST: {base}/email/inbound with 'Content-Type: "
                     "message/rfc822' and 'Authorization: Bearer $IRIS_EMAIL_INBOUND_SECRET'")
    return lines
