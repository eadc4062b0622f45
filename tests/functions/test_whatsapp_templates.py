"""WhatsApp template messages through real HTTP: with IRIS_WHATSAPP_TEMPLATE set, a cron
delivery outside the 24-hour window sends the approved template once (Meta's ``type: template``
shape, checked by the fake) and holds the reply; when the person writes back the held replies
go out, each once."""

import asyncio
from datetime import timedelta

from core.clock import ManualClock
from core.platforms.delivery import HOLD_SECONDS
from core.platforms.whatsapp import preview
from functions import cron
from iris_testing.platform_stack import platform_stack
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import make_job

ADA = "4915112345678"
TEMPLATE = {"IRIS_WHATSAPP_TEMPLATE": "iris_update:en"}


def tick(rt):
    async def go():
        await cron.tick(rt)
        await rt.dispatcher.idle()

    asyncio.run(go())


def held(s):
    return s.rt.store.db.query(
        "SELECT id, status, reopen_id, held_at FROM deliveries WHERE held_at IS NOT NULL"
        " ORDER BY id")


def greeter(s, clock):
    s.whatsapp_post(s.whatsapp.message_payload("hi"))
    s.wait(lambda: s.whatsapp.sent(ADA))
    s.wait(s.settled)
    job = make_job(s.rt.store, s.rt.settings, schedule="every 5h", at=NOW,
                   account=f"whatsapp:{ADA}", prompt="say hi", deliver="whatsapp",
                   name="greeter")
    clock.set(NOW + timedelta(hours=25))  # a day after Ada last wrote
    s.whatsapp.close_window(ADA)  # Meta refuses free-form messages now
    tick(s.rt)
    s.wait(lambda: s.whatsapp.templates_sent(ADA))
    return job


def test_a_template_reopens_the_window_and_the_held_reply_goes_out_once(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock, **TEMPLATE) as s:
        s.whatsapp.approve_template("iris_update", "en", body_parameters=1)
        greeter(s, clock)
        (template,) = s.whatsapp.templates_sent(ADA)
        assert template["name"] == "iris_update" and template["language"] == {"code": "en"}
        (body,) = template["components"]
        assert body["type"] == "body" and body["parameters"][0]["type"] == "text"
        assert body["parameters"][0]["text"].startswith("⏰ greeter")
        assert s.whatsapp.sent(ADA) == ["re: hi"]  # the reply itself waits
        (first,) = held(s)
        assert first["status"] == "pending" and first["reopen_id"].startswith("wamid.")

        clock.set(NOW + timedelta(hours=30))  # a second run while the first still waits
        tick(s.rt)
        s.wait(lambda: len(held(s)) == 2)
        assert len(s.whatsapp.templates_sent(ADA)) == 1  # one template per waiting chat
        assert s.rt.store.deliveries.due() == []

        s.whatsapp.open_window(ADA)  # Ada answers the template
        reply = s.whatsapp.message_payload("what is it?")
        assert s.whatsapp_post(reply).json()["statuses"] == ["recorded"]
        s.wait(lambda: len(s.whatsapp.sent(ADA)) == 4)
        s.wait(s.settled)
        sent = s.whatsapp.sent(ADA)
        assert sum(text.startswith("⏰ greeter") for text in sent) == 2
        assert "re: what is it?" in sent
        assert s.whatsapp.sent(ADA).count(sent[1]) == 1
        s.whatsapp_post(reply)  # Meta re-sends the webhook: nothing goes out twice
        s.wait(s.settled)
        asyncio.run(s.rt.delivery.sweep())
        assert s.whatsapp.sent(ADA) == sent
        assert len(s.whatsapp.templates_sent(ADA)) == 1
        assert [row["status"] for row in held(s)] == ["sent", "sent"]


def test_an_unanswered_template_gives_up_after_the_hold(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock, **TEMPLATE) as s:
        s.whatsapp.approve_template("iris_update", "en")
        greeter(s, clock)
        clock.set(NOW + timedelta(hours=25) + timedelta(seconds=HOLD_SECONDS))
        asyncio.run(s.rt.delivery.sweep())
        (row,) = held(s)
        assert row["status"] == "failed"
        error = s.rt.store.db.scalar("SELECT last_error FROM deliveries WHERE id = ?",
                                     (row["id"],))
        assert "got no answer in 7 days" in error
        assert s.whatsapp.sent(ADA) == ["re: hi"] and len(s.whatsapp.templates_sent(ADA)) == 1


def test_a_template_meta_does_not_know_is_a_recorded_failure(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock, **TEMPLATE) as s:  # never approved
        s.whatsapp_post(s.whatsapp.message_payload("hi"))
        s.wait(lambda: s.whatsapp.sent(ADA))
        s.wait(s.settled)
        make_job(s.rt.store, s.rt.settings, schedule="every 5h", at=NOW,
                 account=f"whatsapp:{ADA}", prompt="say hi", deliver="whatsapp")
        clock.set(NOW + timedelta(hours=25))
        tick(s.rt)
        s.wait(lambda: s.rt.store.db.scalar(
            "SELECT count(*) FROM deliveries WHERE status = 'failed'"))
        assert "132001" in s.rt.store.db.scalar(
            "SELECT last_error FROM deliveries WHERE status = 'failed'")
        assert held(s) == []


def test_the_template_parameter_is_one_short_line():
    assert preview("**Tide** at 06:42\n\n- Wells\t2.4 m") == "Tide at 06:42 - Wells 2.4 m"
    long = preview("word " * 40)
    assert len(long) <= 61 and long.endswith("…") and "\n" not in long
    assert preview("   ") == "a new message"


def test_metas_window_refusal_also_holds_the_reply_behind_the_template(iris_home):
    with platform_stack(iris_home, **TEMPLATE) as s:
        s.whatsapp.approve_template("iris_update", "en")
        s.whatsapp.close_window(ADA)  # Meta counts the window differently from Iris
        s.whatsapp_post(s.whatsapp.message_payload("hello"))
        s.wait(lambda: s.whatsapp.templates_sent(ADA))
        s.wait(lambda: held(s) and held(s)[0]["reopen_id"] is not None)
        assert s.whatsapp.sent(ADA) == []
        s.whatsapp.open_window(ADA)
        s.whatsapp_post(s.whatsapp.message_payload("still there?"))
        s.wait(lambda: len(s.whatsapp.sent(ADA)) == 2)
        s.wait(s.settled)
        assert sorted(s.whatsapp.sent(ADA)) == ["re: hello", "re: still there?"]
        assert len(s.whatsapp.templates_sent(ADA)) == 1


def test_a_person_who_writes_while_the_template_is_on_its_way_still_gets_the_reply(iris_home):
    """The person answers before Meta has answered the template request: their message's
    release finds nothing held yet, so the hold itself sees the newer message and sends."""
    with platform_stack(iris_home, **TEMPLATE) as s:
        s.whatsapp.approve_template("iris_update", "en")
        s.whatsapp.close_window(ADA)
        gate = s.whatsapp.pause_templates()
        try:
            s.whatsapp_post(s.whatsapp.message_payload("hello"))
            s.wait(lambda: s.whatsapp.templates_sent(ADA))  # in flight, not yet answered
            s.whatsapp.open_window(ADA)
            assert s.whatsapp_post(s.whatsapp.message_payload("still there?")).json()[
                "statuses"] == ["recorded"]
            assert held(s) == []  # nothing was held for that message to release
        finally:
            gate.set()
        s.wait(lambda: len(s.whatsapp.sent(ADA)) == 2 and s.settled(), timeout=30)
        assert sorted(s.whatsapp.sent(ADA)) == ["re: hello", "re: still there?"]
        assert len(s.whatsapp.templates_sent(ADA)) == 1
        assert [row["status"] for row in held(s)] == ["sent"]
