"""``clarify`` on Discord through real HTTP: the scripted model (litellm → ScriptedLLM) asks a
question, Iris edits the ``/ask`` response with a button per choice (message components) on the
fake Discord, and a press (a signed MESSAGE_COMPONENT interaction) comes back as the user's next
message; Iris' type 7 response disables the buttons and marks the choice. Another person's press,
a second press, a stale press, a forged signature and a custom id naming someone else's question
change nothing."""


from core.asking.clarify import PRESS_REFUSED
from iris_testing.discord_api import FakeDiscord
from iris_testing.platform_stack import platform_stack
from tests.functions.clarify_common import ASK, user_turns

DM = "1187262000000000042"
ADA = "80351110224678912"


def buttons(message):
    return [b for row in message["components"] for b in row["components"]]


def ask(stack, text="order me a coffee", channel=DM, **kwargs):
    interaction = stack.discord.interaction("ask", {"text": text}, channel_id=channel, **kwargs)
    assert stack.discord_interact(interaction).json() == {"type": 5}
    stack.wait(lambda: stack.discord.messages(channel) and stack.settled())
    return stack.discord.messages(channel)[0]


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def test_a_question_is_answered_by_a_discord_button(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        discord = stack.discord
        question = ask(stack)
        assert question["via"] == "original" and question["content"].startswith("Which size?")
        assert "1. Small" in question["content"] and "2. Large" in question["content"]
        assert [row["type"] for row in question["components"]] == [1]
        shown = buttons(question)
        assert [(b["type"], b["label"]) for b in shown] == [(2, "Small"), (2, "Large")]

        llm.reply("Large it is.")
        pressed = stack.discord_interact(discord.press(question, shown[1]["custom_id"]))
        assert pressed.json()["type"] == 7
        now = discord.message(DM, question["id"])
        assert now["content"] == question["content"]
        assert [(b["label"], b["style"], b.get("disabled")) for b in buttons(now)] == [
            ("Small", 2, True), ("Large", 1, True)]
        stack.wait(lambda: len(discord.messages(DM)) == 2 and stack.settled())
        answer = discord.messages(DM)[1]
        assert (answer["via"], answer["content"]) == ("followup", "Large it is.")
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'

        again = stack.discord_interact(discord.press(question, shown[0]["custom_id"]))
        assert again.json() == {"type": 4, "data": {
            "content": PRESS_REFUSED, "flags": 64, "allowed_mentions": {"parse": []}}}
        assert [e["content"] for e in discord.ephemerals] == [PRESS_REFUSED]
        assert buttons(discord.message(DM, question["id"])) == buttons(now)
        assert count(stack) == 2 and len(llm.requests) == 2
        assert len(discord.messages(DM)) == 2


def test_a_typed_answer_closes_the_question_and_a_later_press_is_stale(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK).reply("Small then.")
    with platform_stack(iris_home, model=model) as stack:
        question = ask(stack)
        stack.discord_interact(stack.discord.interaction("ask", {"text": "1"}))
        stack.wait(lambda: len(stack.discord.messages(DM)) == 2 and stack.settled())
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 1. Small'
        stale = stack.discord.press(question, buttons(question)[1]["custom_id"])
        assert stack.discord_interact(stale).json()["data"]["content"] == PRESS_REFUSED
        stack.wait(stack.finished)
        assert stack.discord.message(DM, question["id"])["components"] == []  # taken off
        assert count(stack) == 2 and len(llm.requests) == 2


def test_in_a_server_channel_only_the_person_asked_can_press(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    channel = "1187262000000000077"
    with platform_stack(iris_home, model=model) as stack:
        discord = stack.discord
        question = ask(stack, channel=channel, guild=True)
        small = buttons(question)[0]["custom_id"]
        other = discord.press(question, small, user_id="80351110224670000", username="bob",
                              guild=True)
        assert stack.discord_interact(other).json()["data"]["content"] == PRESS_REFUSED
        assert discord.ephemerals[-1]["user_id"] == "80351110224670000"
        assert discord.message(channel, question["id"])["components"] == question["components"]
        llm.reply("Small it is.")
        mine = stack.discord_interact(discord.press(question, small, guild=True))
        assert mine.json()["type"] == 7
        stack.wait(lambda: len(discord.messages(channel)) == 2 and stack.settled())
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 1. Small'
        assert discord.messages(channel)[1]["content"] == "Small it is."


def test_a_forged_press_and_someone_elses_question_change_nothing(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        discord = stack.discord
        question = ask(stack)
        large = buttons(question)[1]["custom_id"]

        forged = discord.press(question, large)
        assert stack.discord_post(forged, signer=FakeDiscord()).status_code == 401

        bob_dm = "1187262000000000099"
        llm.reply("hello Bob")
        ask(stack, text="hi", channel=bob_dm, user_id="80351110224670000", username="bob")
        bob_message = discord.messages(bob_dm)[0]
        bobs_press = discord.press({**bob_message, "components": question["components"]},
                                   large, user_id="80351110224670000", username="bob")
        refused = stack.discord_interact(bobs_press)
        assert refused.json()["data"]["content"] == PRESS_REFUSED
        assert count(stack) == 2 and len(llm.requests) == 2
        assert discord.message(DM, question["id"])["components"] == question["components"]

        llm.reply("Large it is.")
        assert stack.discord_interact(discord.press(question, large)).json()["type"] == 7
        stack.wait(lambda: len(discord.messages(DM)) == 2 and stack.settled())
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'
