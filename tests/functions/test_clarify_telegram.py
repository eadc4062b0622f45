"""``clarify`` on Telegram through real HTTP: the scripted model (litellm → ScriptedLLM) asks a
question, Iris sends it with an inline keyboard to the fake Bot API, and a button press
(a ``callback_query`` update) comes back as the user's next message. Another person's press,
a second press and a press on an answered question start no turn."""

import json

import httpx
from click.testing import CliRunner

from iris_testing.platform_stack import platform_stack
from local_dev.cli import cli
from tests.functions.clarify_common import ASK, user_turns


def question_message(stack, chat_id=4242):
    """The question as the bot's message now stands in the fake (with its keyboard)."""
    row = stack.rt.store.db.one(
        "SELECT platform_ids FROM deliveries WHERE text LIKE 'Which size?%'")
    return stack.telegram.message(chat_id, int(json.loads(row["platform_ids"])[0]))


def test_a_question_is_answered_by_a_button(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        stack.telegram_post(stack.telegram.make_update("order me a coffee"))
        stack.wait(lambda: stack.telegram.sent_messages(4242) and stack.settled())
        (sent,) = stack.telegram.sent_messages(4242)
        assert sent["text"].startswith("Which size?")
        assert "1. Small" in sent["text"] and "2. Large" in sent["text"]
        keyboard = sent["reply_markup"]["inline_keyboard"]
        assert [row[0]["text"] for row in keyboard] == ["Small", "Large"]
        message = question_message(stack)
        data = keyboard[1][0]["callback_data"]

        foreign = stack.telegram_post(stack.telegram.make_press(message, data, user_id=999))
        assert foreign.json()["status"] == "ignored"

        llm.reply("Large it is.")
        pressed = stack.telegram_post(stack.telegram.make_press(message, data))
        assert pressed.json()["status"] == "recorded"
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 2 and stack.settled())
        assert stack.telegram.sent_messages(4242)[1]["text"] == "Large it is."
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'
        stack.wait(lambda: "reply_markup" not in question_message(stack))

        first = keyboard[0][0]["callback_data"]
        again = stack.telegram_post(stack.telegram.make_press(message, first))
        assert again.json()["status"] in ("ignored", "duplicate")
        stack.wait(lambda: len(stack.telegram.answered_callbacks()) == 3)
        answers = sorted(stack.telegram.answered_callbacks().values(),
                         key=lambda a: a["callback_query_id"])
        assert [a.get("text") for a in answers] == [
            "This question is closed.", None, "This question is closed."]
        assert stack.rt.store.db.scalar("SELECT count(*) FROM inbox") == 2
        assert len(llm.requests) == 2  # the question and the answer: no other turn
        assert len(stack.telegram.sent_messages(4242)) == 2


def test_a_typed_number_answers_and_a_later_press_is_stale(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK).reply("Small then.")
    with platform_stack(iris_home, model=model) as stack:
        stack.telegram_post(stack.telegram.make_update("order me a coffee"))
        stack.wait(lambda: stack.telegram.sent_messages(4242) and stack.settled())
        message = question_message(stack)
        data = message["reply_markup"]["inline_keyboard"][1][0]["callback_data"]
        stack.telegram_post(stack.telegram.make_update("1"))
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 2 and stack.settled())
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 1. Small'
        stale = stack.telegram_post(stack.telegram.make_press(message, data))
        assert stale.json()["status"] == "ignored"
        assert stack.rt.store.db.scalar("SELECT count(*) FROM inbox") == 2
        assert len(llm.requests) == 2


def test_in_a_group_only_the_person_asked_can_press(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    group = -1001000000001
    with platform_stack(iris_home, model=model, IRIS_GROUP_REPLY_MODE="all") as stack:
        stack.telegram_post(stack.telegram.make_update(
            "order me a coffee", chat_id=group, chat_type="supergroup"))
        stack.wait(lambda: stack.telegram.sent_messages(group) and stack.settled())
        message = question_message(stack, group)
        data = message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        other = stack.telegram.make_press(message, data, user_id=5151, first_name="Bob")
        assert stack.telegram_post(other).json()["status"] == "ignored"
        llm.reply("Small it is.")
        assert stack.telegram_post(stack.telegram.make_press(message, data)).json()[
            "status"] == "recorded"
        stack.wait(lambda: len(stack.telegram.sent_messages(group)) == 2 and stack.settled())
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 1. Small'


def test_a_press_reaches_iris_through_the_webhook_the_cli_registered(scripted_llm, iris_home):
    """Telegram delivers only the update types the webhook asked for: the question and the
    press go through the fake's delivery, after `iris telegram set-webhook` registered it."""
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        registered = CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example"],
                                        env=stack.env)
        assert registered.exit_code == 0, registered.output
        stack.telegram.tunnel = stack.url  # https://iris.example → this Iris on loopback
        asked = stack.telegram.deliver(stack.telegram.make_update("order me a coffee"))
        assert asked is not None and asked.json()["status"] == "recorded"
        stack.wait(lambda: stack.telegram.sent_messages(4242) and stack.settled())
        message = question_message(stack)
        data = message["reply_markup"]["inline_keyboard"][1][0]["callback_data"]
        llm.reply("Large it is.")
        pressed = stack.telegram.deliver(stack.telegram.make_press(message, data))
        assert stack.telegram.withheld == []
        assert pressed is not None and pressed.json()["status"] == "recorded"
        stack.wait(lambda: len(stack.telegram.sent_messages(4242)) == 2 and stack.settled())
        assert stack.telegram.sent_messages(4242)[1]["text"] == "Large it is."
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'


def test_the_fake_withholds_update_types_the_webhook_did_not_ask_for(iris_home):
    with platform_stack(iris_home) as stack:
        api = stack.env["IRIS_TELEGRAM_API_BASE"]
        token = stack.env["IRIS_TELEGRAM_TOKEN"]
        httpx.post(f"{api}/bot{token}/setWebhook", json={
            "url": "https://iris.example/telegram/webhook", "allowed_updates": ["message"],
            "secret_token": stack.env["IRIS_TELEGRAM_SECRET"]})
        stack.telegram.tunnel = stack.url
        press = stack.telegram.make_press({"message_id": 1, "chat": {"id": 4242,
                                                                     "type": "private"}}, "x")
        assert stack.telegram.deliver(press) is None
        assert stack.telegram.withheld == [press]
        delivered = stack.telegram.deliver(stack.telegram.make_update("hello"))
        assert delivered is not None and delivered.status_code == 200
