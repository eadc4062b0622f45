"""Run in a fresh interpreter by test_ack_path.py: build the web app the way a container does,
acknowledge a Telegram private message, a group mention, a Slack event, a WhatsApp message, a
Discord command, an email, a LINE message, an SMS and a Matrix message, note which heavy
modules the process has imported, then a Telegram /stop and a Slack `/iris stop` (answered from
this process, so a platform SDK may load to send the answer, never the turn machinery), and
print both lists (JSON on stdout).

The dispatcher only records: in the cloud, the turn runs in another container."""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
import time
from urllib.parse import urlencode

HEAVY = ("litellm", "mcp", "modal", "daytona", "boto3", "telegram", "slack_sdk", "openai",
         "core.turn.loop", "core.tools", "core.contracts.toolkit", "numpy", "httpx", "smtplib",
         "jinja2",
         "functions.dashboard")
SECRET, SIGNING = "tg-secret", "slack-signing-secret"
WHATSAPP_SECRET, MAIL_SECRET = "wa-app-secret", "mail-secret"
LINE_SECRET = "line-channel-secret"


class Recording:
    def __init__(self) -> None:
        self.chats: list[object] = []

    async def drain(self, chat: object) -> None:
        self.chats.append(chat)


def telegram_update(update_id: int, text: str, chat: dict, **message: object) -> dict:
    return {"update_id": update_id, "message": {
        "message_id": update_id, "date": 1_700_000_000, "text": text, "chat": chat,
        "from": {"id": 4242, "is_bot": False, "first_name": "Ada"}, **message}}


def slack_headers(body: bytes) -> dict[str, str]:
    stamp = str(int(time.time()))
    digest = hmac.new(SIGNING.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256)
    return {"X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": "v0=" + digest.hexdigest()}


def main(home: str) -> None:
    from starlette.testclient import TestClient

    from core.config import load_settings
    from functions.app import create_app
    from functions.runtime import compose
    from iris_testing.discord_api import FakeDiscord
    from iris_testing.line_api import FakeLine
    from iris_testing.mail_inbound import raw_mail
    from iris_testing.matrix_api import FakeHomeserver, matrix_env
    from iris_testing.twilio_api import FakeTwilio, sms_env
    from iris_testing.whatsapp_api import FakeWhatsApp

    discord, whatsapp = FakeDiscord(), FakeWhatsApp(token="t")
    line = FakeLine(token="t", channel_secret=LINE_SECRET)
    twilio = FakeTwilio(auth_token="tw")
    settings = load_settings({
        "IRIS_WHATSAPP_TOKEN": "t", "IRIS_WHATSAPP_APP_SECRET": WHATSAPP_SECRET,
        "IRIS_WHATSAPP_PHONE_NUMBER_ID": whatsapp.phone_number_id,
        "IRIS_WHATSAPP_ACCESS": "open", "IRIS_DISCORD_PUBLIC_KEY": discord.public_key,
        "IRIS_DISCORD_ACCESS": "open", "IRIS_EMAIL_INBOUND_SECRET": MAIL_SECRET,
        "IRIS_EMAIL_ACCESS": "open",
        "IRIS_LINE_CHANNEL_SECRET": LINE_SECRET, "IRIS_LINE_CHANNEL_ACCESS_TOKEN": "t",
        "IRIS_LINE_ACCESS": "open", "IRIS_LINE_API_BASE": "http://127.0.0.1:9",
        **sms_env("http://127.0.0.1:9", "tw", "https://iris.example.net"),
        **matrix_env("http://127.0.0.1:9", "as", "hs"),
        "IRIS_HOME": home, "IRIS_API_KEY": "k", "IRIS_TELEGRAM_TOKEN": "7000001:abc",
        "IRIS_TELEGRAM_SECRET": SECRET, "IRIS_TELEGRAM_ACCESS": "open",
        "IRIS_SLACK_SIGNING_SECRET": SIGNING, "IRIS_SLACK_BOT_TOKEN": "xoxb-1",
        "IRIS_SLACK_ACCESS": "open",  # answers go nowhere (a closed port), fast
        "IRIS_TELEGRAM_API_BASE": "http://127.0.0.1:9", "IRIS_SLACK_API_BASE": "http://127.0.0.1:9/api/",
    })
    recording = Recording()
    rt = compose(settings, dispatcher=recording)
    rt.store.bots.put("telegram", "7000001", {"id": 7000001, "username": "iris_test_bot"})
    statuses = []
    with TestClient(create_app(rt)) as client:
        tg = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
        private = {"id": 4242, "type": "private"}
        group = {"id": -100123, "type": "supergroup"}
        for update in (
            telegram_update(1, "hello", private),
            telegram_update(2, "@iris_test_bot hi", group,
                            entities=[{"type": "mention", "offset": 0, "length": 14}]),
        ):
            statuses.append(client.post("/telegram/webhook", json=update, headers=tg).status_code)
        event = json.dumps({
            "type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event_time": 1,
            "event": {"type": "message", "channel_type": "im", "channel": "D1", "user": "U1",
                      "text": "hello", "ts": "1.000001"},
        }).encode()
        statuses.append(client.post("/slack/events", content=event,
                                    headers=slack_headers(event)).status_code)
        body = json.dumps(whatsapp.message_payload("hello")).encode()
        statuses.append(client.post("/whatsapp/webhook", content=body, headers={
            "Content-Type": "application/json",
            **FakeWhatsApp.sign(body, WHATSAPP_SECRET)}).status_code)
        body = json.dumps(discord.interaction("ask", {"text": "hello"})).encode()
        statuses.append(client.post("/discord/interactions", content=body, headers={
            "Content-Type": "application/json", **discord.sign(body)}).status_code)
        statuses.append(client.post("/email/inbound", content=raw_mail("hello"), headers={
            "Content-Type": "message/rfc822",
            "Authorization": f"Bearer {MAIL_SECRET}"}).status_code)
        body = json.dumps(line.webhook(line.message_event("hello"))).encode()
        statuses.append(client.post("/line/webhook", content=body, headers={
            "Content-Type": "application/json", **FakeLine.sign(body, LINE_SECRET)}).status_code)
        form = twilio.inbound("hello")
        statuses.append(client.post("/sms/webhook", data=form, headers=FakeTwilio.sign(
            "https://iris.example.net/sms/webhook", form, "tw")).status_code)
        homeserver = FakeHomeserver(as_token="as")
        statuses.append(client.put(
            "/_matrix/app/v1/transactions/t1", headers={"Authorization": "Bearer hs"},
            content=homeserver.transaction(homeserver.message_event("hello"))).status_code)
        after_messages = [name for name in HEAVY if name in sys.modules]
        stop = telegram_update(3, "/stop", private)
        statuses.append(client.post("/telegram/webhook", json=stop, headers=tg).status_code)
        command = urlencode({"command": "/iris", "text": "stop", "team_id": "T1",
                             "user_id": "U1", "channel_id": "D1", "trigger_id": "t1",
                             "response_url": "http://127.0.0.1:9/respond"}).encode()
        statuses.append(client.post(
            "/slack/events", content=command,
            headers={**slack_headers(command),
                     "Content-Type": "application/x-www-form-urlencoded"}).status_code)
    after_stop = [name for name in HEAVY if name in sys.modules]
    print(json.dumps({"statuses": statuses, "after_messages": after_messages,
                      "after_stop": after_stop, "drained": len(recording.chats)}))


if __name__ == "__main__":
    main(sys.argv[1])
