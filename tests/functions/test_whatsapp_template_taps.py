"""Taps on a WhatsApp template's quick-reply button, through real HTTP (signed webhooks into
the emulator, the fake Cloud API, the scripted model through litellm): a tap on the template
Iris sent to reopen the window releases the held reply without a turn (the model is not
called), and a re-sent tap sends nothing more. A tap naming any other message (another
person's template, a template Iris never sent, one whose replies were given up) is an ordinary
message; a forged signature changes nothing."""

import asyncio
from datetime import timedelta

from core.clock import ManualClock
from core.platforms.delivery import HOLD_SECONDS
from iris_testing.platform_stack import platform_stack
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import make_job
from tests.functions.test_whatsapp_templates import TEMPLATE, held, tick

ADA = "4915112345678"
BOB = "4915187654321"
BUTTON = "Show me"


def waiting(s, llm, clock):
    """Ada wrote a day ago; a cron run's reply is held behind the template. Returns the
    template's wamid."""
    s.whatsapp.approve_template("iris_update", "en", quick_replies=(BUTTON,))
    llm.reply("Hello Ada.")
    s.whatsapp_post(s.whatsapp.message_payload("hi"))
    s.wait(lambda: s.whatsapp.sent(ADA) and s.settled())
    make_job(s.rt.store, s.rt.settings, schedule="every 5h", at=NOW,
             account=f"whatsapp:{ADA}", prompt="tide times", deliver="whatsapp",
             name="tides")
    llm.reply("High tide at 06:42.")
    clock.set(NOW + timedelta(hours=25))
    s.whatsapp.close_window(ADA)
    tick(s.rt)
    s.wait(lambda: s.whatsapp.templates_sent(ADA) and held(s)
           and held(s)[0]["reopen_id"] is not None)
    (template,) = s.whatsapp.template_ids(ADA)
    assert held(s)[0]["reopen_id"] == template and held(s)[0]["status"] == "pending"
    assert s.whatsapp.sent(ADA) == ["Hello Ada."]
    return template


def quiet(s):
    """Settled, apart from replies held behind a template."""
    db = s.rt.store.db
    return not db.scalar("SELECT count(*) FROM inbox WHERE status = 'pending'") and not \
        db.scalar("SELECT count(*) FROM deliveries WHERE status = 'pending' AND held_at IS NULL")


def inbox_count(s):
    return s.rt.store.db.scalar("SELECT count(*) FROM inbox")


def test_a_tap_releases_the_held_reply_without_a_turn(scripted_llm, iris_home):
    llm, model = scripted_llm
    clock = ManualClock(NOW)
    with platform_stack(iris_home, model=model, clock=clock, **TEMPLATE) as s:
        template = waiting(s, llm, clock)
        calls = len(llm.requests)
        s.whatsapp.open_window(ADA)
        tap = s.whatsapp.tap_payload(template, BUTTON)
        answered = s.whatsapp_post(tap).json()
        s.wait(lambda: len(s.whatsapp.sent(ADA)) >= 2 and s.settled())
        assert len(llm.requests) == calls  # the model was not asked about "Show me"
        sent = s.whatsapp.sent(ADA)
        assert len(sent) == 2 and "High tide at 06:42." in sent[1]
        assert answered["statuses"] == ["tapped"]
        assert [row["status"] for row in held(s)] == ["sent"]
        entry = s.rt.store.db.one(
            "SELECT status, reply FROM inbox WHERE platform_message_id = ?",
            (tap["entry"][0]["changes"][0]["value"]["messages"][0]["id"],))
        assert entry["status"] == "done" and entry["reply"] is None

        count = inbox_count(s)
        assert s.whatsapp_post(tap).json()["statuses"] == ["duplicate"]  # Meta re-sends
        s.wait(s.settled)
        asyncio.run(s.rt.delivery.sweep())
        assert s.whatsapp.sent(ADA) == sent and inbox_count(s) == count
        assert len(llm.requests) == calls and len(s.whatsapp.templates_sent(ADA)) == 1


def test_another_persons_tap_with_that_template_id_releases_nothing_of_hers(
        scripted_llm, iris_home):
    llm, model = scripted_llm
    clock = ManualClock(NOW)
    with platform_stack(iris_home, model=model, clock=clock, **TEMPLATE) as s:
        template = waiting(s, llm, clock)
        llm.reply("Hello Bob.")
        s.whatsapp_post(s.whatsapp.message_payload("hello", wa_id=BOB, name="Bob"))
        s.wait(lambda: s.whatsapp.sent(BOB) and quiet(s))
        calls = len(llm.requests)

        llm.reply("Show you what, Bob?")
        forged = s.whatsapp.tap_payload(template, BUTTON, wa_id=BOB, name="Bob")
        assert s.whatsapp_post(forged).json()["statuses"] == ["recorded"]  # an ordinary message
        s.wait(lambda: len(s.whatsapp.sent(BOB)) == 2 and quiet(s))
        assert s.whatsapp.sent(BOB) == ["Hello Bob.", "Show you what, Bob?"]
        assert len(llm.requests) == calls + 1
        asyncio.run(s.rt.delivery.sweep())
        assert s.whatsapp.sent(ADA) == ["Hello Ada."]
        (row,) = held(s)
        assert row["status"] == "pending" and row["reopen_id"] == template


def test_a_forged_signature_changes_nothing(scripted_llm, iris_home):
    llm, model = scripted_llm
    clock = ManualClock(NOW)
    with platform_stack(iris_home, model=model, clock=clock, **TEMPLATE) as s:
        template = waiting(s, llm, clock)
        calls, count = len(llm.requests), inbox_count(s)
        s.whatsapp.open_window(ADA)
        tap = s.whatsapp.tap_payload(template, BUTTON)
        assert s.whatsapp_post(tap, secret="not-the-app-secret").status_code == 401
        assert s.whatsapp_post(tap, secret=None).status_code == 401
        asyncio.run(s.rt.delivery.sweep())
        assert inbox_count(s) == count and s.whatsapp.sent(ADA) == ["Hello Ada."]
        assert [row["status"] for row in held(s)] == ["pending"]

        assert s.whatsapp_post(tap).json()["statuses"] == ["tapped"]  # the real one counts
        s.wait(lambda: len(s.whatsapp.sent(ADA)) == 2 and s.settled())
        assert len(llm.requests) == calls


def test_a_tap_on_a_template_iris_never_sent_is_an_ordinary_message(scripted_llm, iris_home):
    llm, model = scripted_llm
    with platform_stack(iris_home, model=model, **TEMPLATE) as s:
        llm.reply("Hello Ada.").reply("Show you what?")
        s.whatsapp_post(s.whatsapp.message_payload("hi"))
        s.wait(lambda: s.whatsapp.sent(ADA) and s.settled())
        stale = s.whatsapp.tap_payload("wamid.HBgLNEVERSENTBYIRIS", BUTTON)
        assert s.whatsapp_post(stale).json()["statuses"] == ["recorded"]
        s.wait(lambda: len(s.whatsapp.sent(ADA)) == 2 and s.settled())
        assert s.whatsapp.sent(ADA) == ["Hello Ada.", "Show you what?"]
        assert llm.requests[-1]["messages"][-1]["content"].endswith(BUTTON)


def test_a_tap_after_the_hold_gave_up_is_an_ordinary_message(scripted_llm, iris_home):
    llm, model = scripted_llm
    clock = ManualClock(NOW)
    with platform_stack(iris_home, model=model, clock=clock, **TEMPLATE) as s:
        template = waiting(s, llm, clock)
        clock.set(NOW + timedelta(hours=25) + timedelta(seconds=HOLD_SECONDS))
        asyncio.run(s.rt.delivery.sweep())
        assert [row["status"] for row in held(s)] == ["failed"]
        s.whatsapp.open_window(ADA)
        llm.reply("That update expired; shall I look again?")
        tap = s.whatsapp.tap_payload(template, BUTTON)
        assert s.whatsapp_post(tap).json()["statuses"] == ["recorded"]
        s.wait(lambda: len(s.whatsapp.sent(ADA)) == 2 and s.settled())
        assert s.whatsapp.sent(ADA)[-1] == "That update expired; shall I look again?"
        assert [row["status"] for row in held(s)] == ["failed"]


def test_a_tap_after_the_answer_went_out_is_recorded_without_a_turn(scripted_llm, iris_home):
    """Ada wrote back in words first (that released the held reply and got its own answer);
    her later tap on the template has nothing left to release and asks the model nothing."""
    llm, model = scripted_llm
    clock = ManualClock(NOW)
    with platform_stack(iris_home, model=model, clock=clock, **TEMPLATE) as s:
        template = waiting(s, llm, clock)
        s.whatsapp.open_window(ADA)
        llm.reply("It is about the tide.")
        s.whatsapp_post(s.whatsapp.message_payload("what is it?"))
        s.wait(lambda: len(s.whatsapp.sent(ADA)) == 3 and s.settled())
        calls, sent = len(llm.requests), s.whatsapp.sent(ADA)
        tap = s.whatsapp.tap_payload(template, BUTTON)
        assert s.whatsapp_post(tap).json()["statuses"] == ["tapped"]
        s.wait(s.settled)
        asyncio.run(s.rt.delivery.sweep())
        assert len(llm.requests) == calls and s.whatsapp.sent(ADA) == sent


def test_a_button_message_without_a_context_is_read_as_text():
    from core.platforms.whatsapp_inbound import WaPayload, parse_payload
    from iris_testing.whatsapp_api import FakeWhatsApp

    wa = FakeWhatsApp(token="t")
    tap = wa.tap_payload("wamid.HBgLSOMETEMPLATE", BUTTON)
    (parsed,) = parse_payload(WaPayload.model_validate(tap), wa.phone_number_id)
    assert parsed.message.tapped == "wamid.HBgLSOMETEMPLATE"
    assert parsed.message.text == BUTTON
    del tap["entry"][0]["changes"][0]["value"]["messages"][0]["context"]
    (parsed,) = parse_payload(WaPayload.model_validate(tap), wa.phone_number_id)
    assert parsed.message.tapped is None and parsed.message.text == BUTTON
