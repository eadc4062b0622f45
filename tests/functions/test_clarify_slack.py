"""``clarify`` on Slack through real HTTP: the question is posted with Block Kit buttons to the
fake Web API, and a ``block_actions`` interactivity payload (a signed form post) answers it;
someone else's press, and a press after the answer, start no turn."""

import json

from iris_testing.platform_stack import platform_stack


def test_a_question_is_answered_by_a_slack_button(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", {"question": "Where?", "choices": ["Indoors", "Outdoors"]})
    with platform_stack(iris_home, model=model) as stack:
        slack = stack.slack
        stack.slack_post(slack.event_payload(
            slack.message_event("book a table", channel="D123", channel_type="im")))
        stack.wait(lambda: slack.posted("D123") and stack.settled())
        (posted,) = slack.posted("D123")
        assert posted["text"].startswith("Where?")
        buttons = posted["blocks"][1]["elements"]
        assert [b["text"]["text"] for b in buttons] == ["Indoors", "Outdoors"]
        row = stack.rt.store.db.one("SELECT platform_ids FROM deliveries")
        message = slack.message("D123", json.loads(row["platform_ids"])[0])

        other = slack.block_actions(message, "D123", buttons[1]["value"], user="U999")
        assert stack.slack_interact(other).status_code == 200

        llm.reply("Outdoors, booked.")
        press = slack.block_actions(message, "D123", buttons[1]["value"])
        assert stack.slack_interact(press).status_code == 200
        stack.wait(lambda: len(slack.posted("D123")) == 2 and stack.settled())
        assert slack.posted("D123")[1]["text"] == "Outdoors, booked."
        asked = [r["messages"][-1]["content"] for r in llm.requests]
        assert asked[-1] == '[answer to "Where?"] 2. Outdoors'
        stack.wait(lambda: slack.message("D123", message["ts"])["blocks"][1]["type"]
                   == "context")

        assert stack.slack_interact(press).status_code == 200  # pressed again: closed
        assert stack.rt.store.db.scalar("SELECT count(*) FROM inbox") == 2
        assert len(llm.requests) == 2
        assert len(slack.posted("D123")) == 2
        assert stack.settled()


def test_a_typed_answer_replaces_the_slack_buttons_once(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", {"question": "Where?", "choices": ["Indoors", "Outdoors"]})
    with platform_stack(iris_home, model=model) as stack:
        slack = stack.slack

        def say(text):
            stack.slack_post(slack.event_payload(
                slack.message_event(text, channel="D123", channel_type="im")))
            stack.wait(stack.finished)

        say("book a table")
        row = stack.rt.store.db.one("SELECT platform_ids FROM deliveries")
        ts = json.loads(row["platform_ids"])[0]
        llm.reply("Outdoors, booked.").reply("Enjoy.")
        say("outdoors")
        assert llm.requests[-1]["messages"][-1]["content"] == '[answer to "Where?"] 2. Outdoors'
        now = slack.message("D123", ts)
        assert [b["type"] for b in now["blocks"]] == ["section", "context"]
        assert now["blocks"][1]["elements"][0]["text"] == "→ Outdoors"
        say("thanks")
        assert slack.posted("D123")[-1]["text"] == "Enjoy."
        assert slack.methods_called().count("chat.update") == 1
