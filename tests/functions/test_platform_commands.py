"""Every slash command of the platforms issue answers on Telegram, Slack and the HTTP API
without a model call."""

import pytest

from iris_testing.platform_stack import platform_stack

COMMANDS = ["/new", "/help", "/memory", "/skills", "/usage", "/compress", "/model", "/link",
            "/approve ABCD2345", "/stop"]


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
                 stack.slack.posted("D1")[-1]["text"]):
        assert text.strip() and "Unknown command" not in text
    assert stack.model.seen == []
