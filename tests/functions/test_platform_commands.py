"""Every slash command answers on Telegram, Slack, WhatsApp, Discord (as Discord commands),
email and the HTTP API without a model call."""

import pytest

from iris_testing.mail_inbound import raw_mail
from iris_testing.platform_stack import platform_stack

WA_ID = "4915112345678"
DISCORD_DM = "1187262000000000042"

COMMANDS = ["/new", "/help", "/memory", "/skills", "/usage", "/compress", "/model", "/link",
            "/approve ABCD2345", "/stop", "/remember I like green tea", "/forget green tea"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with platform_stack(tmp_path_factory.mktemp("commands-home")) as running:
        yield running


@pytest.mark.parametrize("command", COMMANDS)
def test_commands_answer_everywhere_without_the_model(stack, command):
    telegram_before = len(stack.telegram.sent_messages(4242))
    slack_before = len(stack.slack.posted("D1"))
    assert stack.telegram_post(stack.telegram.make_update(command)).status_code == 200
    event = stack.slack.message_event(f" {command}", channel="D1", channel_type="im")
    assert stack.slack_post(stack.slack.event_payload(event)).status_code == 200
    http = stack.http.post(
        f"{stack.url}/v1/chat/completions", headers={"Authorization": "Bearer test-key"},
        json={"messages": [{"role": "user", "content": command}], "user": "alice"},
    )
    assert http.status_code == 200, http.text
    assert http.json()["choices"][0]["message"]["content"].strip()
    stack.wait(lambda: len(stack.telegram.sent_messages(4242)) > telegram_before)
    stack.wait(lambda: len(stack.slack.posted("D1")) > slack_before)
    for text in (stack.telegram.sent_messages(4242)[-1]["text"],
                 stack.slack.posted("D1")[-1]["text"], *more_platforms(stack, command)):
        assert text.strip() and "Unknown command" not in text
    assert stack.model.seen == []


def more_platforms(stack, command):
    """``command`` sent on WhatsApp, Discord and email; their answers."""
    whatsapp_before = len(stack.whatsapp.sent(WA_ID))
    discord_before = len(stack.discord.texts(DISCORD_DM))
    mail_before = len(stack.mails())
    assert stack.whatsapp_post(stack.whatsapp.message_payload(command)).status_code == 200
    name, _, args = command[1:].partition(" ")
    interaction = stack.discord.interaction(name, {"args": args} if args else {})
    assert stack.discord_post(interaction).json() == {"type": 5}
    assert stack.email_post(raw_mail(command, subject="")).status_code == 200
    stack.wait(lambda: len(stack.whatsapp.sent(WA_ID)) > whatsapp_before)
    stack.wait(lambda: len(stack.discord.texts(DISCORD_DM)) > discord_before)
    stack.wait(lambda: len(stack.mails()) > mail_before)
    mail = stack.mails()[-1].get_body(preferencelist=("plain",)).get_content()
    return [stack.whatsapp.sent(WA_ID)[-1], stack.discord.texts(DISCORD_DM)[-1], mail]
