"""``clarify`` on WhatsApp through real HTTP: the scripted model (litellm → ScriptedLLM) asks a
question, Iris sends it as an interactive message (reply buttons for up to three choices, a list
for four) to the fake Cloud API, and a press (a signed webhook with a message of type
``interactive``) comes back as the person's next message. A second press, a stale press, a press
naming someone else's question and a forged signature change nothing; Meta re-sending the press
that counted gets no note."""

from datetime import timedelta

from core.asking.clarify import PRESS_REFUSED
from core.clock import ManualClock
from iris_testing.platform_stack import platform_stack
from tests.clocks import NOW
from tests.functions.clarify_common import ASK, user_turns

ADA = "4915112345678"
BOB = "4915187654321"


def ask(stack, wa_id=ADA, text="order me a coffee"):
    stack.whatsapp_post(stack.whatsapp.message_payload(text, wa_id=wa_id))
    stack.wait(lambda: stack.whatsapp.interactive_sent(wa_id) and stack.settled())
    (sent,) = stack.whatsapp.interactive_sent(wa_id)
    return sent


def ids(sent):
    if sent["type"] == "button":
        return [b["reply"]["id"] for b in sent["action"]["buttons"]]
    return [r["id"] for s in sent["action"]["sections"] for r in s["rows"]]


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def test_a_question_is_answered_by_a_reply_button(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        wa = stack.whatsapp
        sent = ask(stack)
        assert sent["type"] == "button" and wa.sent(ADA) == []
        assert sent["body"]["text"].startswith("Which size?")
        assert "1. Small" in sent["body"]["text"] and "2. Large" in sent["body"]["text"]
        assert [b["reply"]["title"] for b in sent["action"]["buttons"]] == ["Small", "Large"]

        llm.reply("Large it is.")
        press = wa.press_payload(sent, ids(sent)[1])
        assert stack.whatsapp_post(press).json()["statuses"] == ["recorded"]
        stack.wait(lambda: wa.sent(ADA) and stack.settled())
        assert wa.sent(ADA) == ["Large it is."]
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'

        assert stack.whatsapp_post(press).json()["statuses"] == ["ignored"]  # Meta re-sends
        again = wa.press_payload(sent, ids(sent)[0])
        assert stack.whatsapp_post(again).json()["statuses"] == ["ignored"]
        stack.wait(lambda: len(wa.sent(ADA)) == 2 and stack.settled())
        assert wa.sent(ADA) == ["Large it is.", PRESS_REFUSED]
        assert stack.whatsapp_post(again).json()["statuses"] == ["ignored"]
        stack.wait(stack.settled)
        assert len(wa.sent(ADA)) == 2  # the re-sent second press: its note went out once
        assert count(stack) == 2 and len(llm.requests) == 2


def test_four_choices_are_a_list_and_a_row_answers(scripted_llm, iris_home):
    llm, model = scripted_llm
    choices = ["Espresso", "Flat white", "Cappuccino with oat milk and cinnamon", "Tea"]
    llm.tool_call("clarify", {"question": "Which drink?", "choices": choices})
    with platform_stack(iris_home, model=model) as stack:
        wa = stack.whatsapp
        sent = ask(stack)
        assert sent["type"] == "list" and sent["action"]["button"] == "Choose"
        (section,) = sent["action"]["sections"]
        titles = [row["title"] for row in section["rows"]]
        assert titles == ["1. Espresso", "2. Flat white", "3. Cappuccino with oat…", "4. Tea"]
        assert section["rows"][2]["description"] == choices[2]

        llm.reply("Cappuccino coming.")
        press = wa.press_payload(sent, ids(sent)[2])
        assert press["entry"][0]["changes"][0]["value"]["messages"][0]["interactive"][
            "type"] == "list_reply"
        assert stack.whatsapp_post(press).json()["statuses"] == ["recorded"]
        stack.wait(lambda: wa.sent(ADA) and stack.settled())
        assert user_turns(llm)[-1] == f'[answer to "Which drink?"] 3. {choices[2]}'


def test_a_typed_answer_closes_it_and_forged_or_stale_presses_change_nothing(scripted_llm,
                                                                            iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK).reply("Small then.")
    with platform_stack(iris_home, model=model) as stack:
        wa = stack.whatsapp
        sent = ask(stack)
        press = wa.press_payload(sent, ids(sent)[1])
        assert stack.whatsapp_post(press, secret="not-the-app-secret").status_code == 401
        assert stack.whatsapp_post(press, secret=None).status_code == 401
        assert count(stack) == 1 and wa.sent(ADA) == []

        stack.whatsapp_post(wa.message_payload("small"))
        stack.wait(lambda: wa.sent(ADA) and stack.settled())
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 1. Small'
        assert stack.whatsapp_post(press).json()["statuses"] == ["ignored"]
        stack.wait(lambda: len(wa.sent(ADA)) == 2 and stack.settled())
        assert wa.sent(ADA) == ["Small then.", PRESS_REFUSED]
        assert count(stack) == 2 and len(llm.requests) == 2


def test_a_press_naming_someone_elses_question_does_nothing(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        wa = stack.whatsapp
        sent = ask(stack)
        forged = wa.press_payload(sent, ids(sent)[1], wa_id=BOB, name="Bob")
        assert stack.whatsapp_post(forged).json()["statuses"] == ["ignored"]
        stack.wait(lambda: wa.sent(BOB) and stack.settled())
        assert wa.sent(BOB) == [PRESS_REFUSED]
        assert count(stack) == 1 and len(llm.requests) == 1

        llm.reply("Large it is.")
        mine = wa.press_payload(sent, ids(sent)[1])
        assert stack.whatsapp_post(mine).json()["statuses"] == ["recorded"]
        stack.wait(lambda: wa.sent(ADA) and stack.settled())
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'
        assert wa.sent(ADA) == ["Large it is."] and wa.sent(BOB) == [PRESS_REFUSED]


def test_a_question_refused_outside_the_window_waits_behind_the_template(scripted_llm, iris_home):
    """Meta refuses the interactive question (131047): with a template configured it is held
    like any reply, and goes out with its buttons when the person writes back."""
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    clock = ManualClock(NOW)
    with platform_stack(iris_home, model=model, clock=clock,
                        IRIS_WHATSAPP_TEMPLATE="iris_update:en") as stack:
        wa = stack.whatsapp
        wa.approve_template("iris_update", "en", body_parameters=1)
        wa.close_window(ADA)
        stack.whatsapp_post(wa.message_payload("order me a coffee"))
        stack.wait(lambda: wa.templates_sent(ADA))
        assert wa.interactive_sent(ADA) == []

        wa.open_window(ADA)
        clock.set(NOW + timedelta(minutes=5))
        llm.reply("ok")
        stack.whatsapp_post(wa.message_payload("?"))
        stack.wait(lambda: wa.interactive_sent(ADA) and stack.settled())
        (sent,) = wa.interactive_sent(ADA)
        assert sent["type"] == "button" and sent["body"]["text"].startswith("Which size?")
        assert len(wa.templates_sent(ADA)) == 1
