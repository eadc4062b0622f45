"""A ``clarify`` question that closes without a press loses its buttons, through real HTTP
against the fake Telegram Bot API and the fake Discord: answered in words, found expired by the
next message. A second message edits nothing more, another person's question is left alone, and
a failing edit loses no answer."""

import json
from datetime import UTC, datetime, timedelta

from core.clock import ManualClock
from iris_testing.platform_stack import platform_stack
from tests.functions.clarify_common import ASK, user_turns

BOB = 5151
ADA_DM = "1187262000000000042"
BOB_DM = "1187262000000000099"
BOB_ID = "80351110224670000"


def question(stack, chat_id):
    """The question as the bot's message in ``chat_id`` now stands in the fake Telegram."""
    row = stack.rt.store.db.one(
        "SELECT platform_ids FROM deliveries WHERE chat_key = ? AND target LIKE '%choices%'",
        (f"telegram:{chat_id}",))
    return stack.telegram.message(chat_id, int(json.loads(row["platform_ids"])[0]))


def markup_edits(stack):
    return [params for method, params in stack.telegram.calls
            if method.lower() == "editmessagereplymarkup"]


def telegram_says(stack, text, **kwargs):
    stack.telegram_post(stack.telegram.make_update(text, **kwargs))
    stack.wait(stack.finished)


def test_a_typed_answer_takes_the_keyboard_off_once_and_only_its_own(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK).tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        telegram_says(stack, "order me a coffee")
        telegram_says(stack, "order me a tea", chat_id=BOB, user_id=BOB, first_name="Bob")
        ada, bob = question(stack, 4242), question(stack, BOB)
        assert "reply_markup" in ada and "reply_markup" in bob

        llm.reply("Small then.")
        telegram_says(stack, "1")
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 1. Small'
        assert "reply_markup" not in question(stack, 4242)
        (edit,) = markup_edits(stack)
        assert (str(edit["chat_id"]), int(edit["message_id"])) == ("4242", ada["message_id"])
        assert "reply_markup" not in edit  # Telegram removes the keyboard when none is given
        assert question(stack, BOB)["reply_markup"] == bob["reply_markup"]

        llm.reply("You're welcome.")
        telegram_says(stack, "thanks")
        assert stack.telegram.sent_messages(4242)[-1]["text"] == "You're welcome."
        assert len(markup_edits(stack)) == 1
        assert question(stack, BOB)["reply_markup"] == bob["reply_markup"]


def test_a_failing_edit_still_records_the_answer(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK).reply("Large it is.")
    with platform_stack(iris_home, model=model) as stack:
        telegram_says(stack, "order me a coffee")
        stack.telegram.fail_next("editMessageReplyMarkup", error_code=500)
        telegram_says(stack, "large")
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'
        assert stack.telegram.sent_messages(4242)[-1]["text"] == "Large it is."
        assert len(markup_edits(stack)) == 1  # tried once, refused, logged
        assert "reply_markup" in question(stack, 4242)
        closed = stack.rt.store.db.scalar("SELECT closed_by FROM clarifications")
        assert closed == stack.rt.store.db.scalar("SELECT max(id) FROM inbox")


def test_an_expired_question_loses_its_keyboard_when_the_next_message_comes(
        scripted_llm, iris_home):
    llm, model = scripted_llm
    clock = ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    llm.tool_call("clarify", ASK).reply("Hello again.")
    with platform_stack(iris_home, model=model, clock=clock) as stack:
        telegram_says(stack, "order me a coffee")
        clock.advance(timedelta(hours=25))  # clarify_hours is 24
        telegram_says(stack, "1")
        assert user_turns(llm)[-1] == "1"  # too late to be an answer
        assert "reply_markup" not in question(stack, 4242)
        assert len(markup_edits(stack)) == 1


def discord_buttons(message):
    return [b for row in message["components"] for b in row["components"]]


def discord_says(stack, text, channel=ADA_DM, **kwargs):
    interaction = stack.discord.interaction("ask", {"text": text}, channel_id=channel, **kwargs)
    assert stack.discord_interact(interaction).json() == {"type": 5}
    stack.wait(stack.finished)


def test_a_typed_answer_takes_the_discord_buttons_off_once(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK).tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        discord = stack.discord
        discord_says(stack, "order me a coffee")
        discord_says(stack, "order me a tea", channel=BOB_DM, user_id=BOB_ID, username="bob")
        ada, bob = discord.messages(ADA_DM)[0], discord.messages(BOB_DM)[0]
        assert len(discord_buttons(ada)) == 2 and len(discord_buttons(bob)) == 2

        llm.reply("Small then.")
        discord_says(stack, "small")
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 1. Small'
        assert discord.message(ADA_DM, ada["id"])["components"] == []
        assert discord.message(ADA_DM, ada["id"])["content"] == ada["content"]
        assert discord.edits == [{"channel_id": ADA_DM, "message_id": ada["id"],
                                  "body": {"components": []}}]
        assert discord.message(BOB_DM, bob["id"])["components"] == bob["components"]

        llm.reply("You're welcome.")
        discord_says(stack, "thanks")
        assert discord.texts(ADA_DM)[-1] == "You're welcome."
        assert len(discord.edits) == 1


def test_a_failing_discord_edit_still_records_the_answer(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK).reply("Large it is.")
    with platform_stack(iris_home, model=model) as stack:
        discord = stack.discord
        discord_says(stack, "order me a coffee")
        asked = discord.messages(ADA_DM)[0]
        discord.fail_edits()
        discord_says(stack, "2")
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'
        assert discord.texts(ADA_DM)[-1] == "Large it is."
        assert len(discord.edits) == 1
        assert discord.message(ADA_DM, asked["id"])["components"] == asked["components"]
