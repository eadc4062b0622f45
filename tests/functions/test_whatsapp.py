"""The WhatsApp Cloud API webhook through real HTTP: signed payloads → Iris → worker → Iris'
sender → the fake Graph API on loopback (iris_testing/whatsapp_api.py)."""

import asyncio
import json
import subprocess
import sys
from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.memory.book import Limits, MemoryBook
from core.memory.ops import Author
from core.scheduler.jobs import CronJobs
from functions import cron
from iris_testing.platform_stack import WHATSAPP_VERIFY_TOKEN, EchoModel, platform_stack
from tests.clocks import NOW
from tests.core.memory.helpers import op
from tests.core.scheduler.cron_helpers import make_job

ADA = "4915112345678"


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def test_the_subscription_challenge_is_answered_only_with_the_verify_token(stack):
    url = f"{stack.url}/whatsapp/webhook"
    good = {"hub.mode": "subscribe", "hub.verify_token": WHATSAPP_VERIFY_TOKEN,
            "hub.challenge": "1158201444"}
    response = stack.http.get(url, params=good)
    assert (response.status_code, response.text) == (200, "1158201444")
    assert stack.http.get(url, params={**good, "hub.verify_token": "nope"}).status_code == 403
    assert stack.http.get(url, params={**good, "hub.mode": "unsubscribe"}).status_code == 403


def test_a_message_is_answered_in_whatsapp_markup(stack):
    response = stack.whatsapp_post(stack.whatsapp.message_payload("make **this** bold"))
    assert response.status_code == 200 and response.json()["statuses"] == ["recorded"]
    stack.wait(lambda: stack.whatsapp.sent(ADA))
    assert stack.whatsapp.sent(ADA) == ["re: make *this* bold"]
    (request,) = stack.whatsapp.sent_requests()
    assert request["messaging_product"] == "whatsapp" and request["type"] == "text"
    user = stack.rt.store.users.resolve(f"whatsapp:{ADA}")
    assert stack.rt.store.users.get(user).display_name == "Ada"


def test_forged_or_missing_signatures_are_refused_and_store_nothing(stack):
    payload = stack.whatsapp.message_payload("hello")
    assert stack.whatsapp_post(payload, secret="not-the-app-secret").status_code == 401
    assert stack.whatsapp_post(payload, secret=None).status_code == 401
    body = json.dumps(payload).encode()
    signed_other = stack.whatsapp.sign(body + b" ", "whatsapp-app-secret")
    tampered = stack.http.post(f"{stack.url}/whatsapp/webhook", content=body,
                               headers={"Content-Type": "application/json", **signed_other})
    assert tampered.status_code == 401
    assert count(stack) == 0 and count(stack, "users") == 0
    assert stack.model.seen == []


def test_a_redelivered_message_runs_one_turn_and_gets_one_reply(stack):
    payload = stack.whatsapp.message_payload("once please")
    for _ in range(3):
        assert stack.whatsapp_post(payload).status_code == 200
    stack.wait(stack.settled)
    stack.wait(lambda: stack.whatsapp.sent(ADA))
    assert stack.model.seen == ["once please"]
    assert stack.whatsapp.sent(ADA) == ["re: once please"]


def test_status_callbacks_and_other_numbers_are_acknowledged_and_ignored(stack):
    wa = stack.whatsapp
    assert stack.whatsapp_post(wa.status_payload("wamid.out1", "read")).json() == {
        "ok": True, "statuses": []}
    other = wa.message_payload("for another number", phone_number_id="999")
    assert stack.whatsapp_post(other).json()["statuses"] == []
    reaction = wa.message_payload(None, kind="reaction",
                                  media={"message_id": "wamid.x", "emoji": "👍"})
    assert stack.whatsapp_post(reaction).json()["statuses"] == ["ignored"]
    assert count(stack) == 0


def test_a_sticker_gets_a_plain_answer_without_a_turn(stack):
    # images and documents are read (tests/functions/test_media_in.py); stickers are not
    sticker = stack.whatsapp.message_payload(None, kind="sticker", media={
        "id": "1234567", "mime_type": "image/webp", "animated": False})
    assert stack.whatsapp_post(sticker).json()["statuses"] == ["answered"]
    stack.wait(lambda: stack.whatsapp.sent(ADA))
    assert "not videos or stickers" in stack.whatsapp.sent(ADA)[0]
    assert stack.model.seen == [] and count(stack) == 0


def test_a_stranger_gets_a_pairing_code_and_after_approval_a_reply(iris_home):
    with platform_stack(iris_home, IRIS_WHATSAPP_ACCESS="pairing") as s:
        first = s.whatsapp_post(s.whatsapp.message_payload("hello?"))
        assert first.json()["statuses"] == ["denied"]
        s.wait(lambda: s.whatsapp.sent(ADA))
        (answer,) = s.whatsapp.sent(ADA)
        assert "pairing code" in answer.lower()
        assert count(s) == 0 and s.model.seen == []
        code = answer.split("pairing code is ", 1)[1].split(" ", 1)[0]
        from core.identity.pairing import Pairing

        Pairing(s.rt.store).approve(code, by="cli:operator")
        assert s.whatsapp_post(s.whatsapp.message_payload("hello again")).json()[
            "statuses"] == ["recorded"]
        s.wait(lambda: "re: hello again" in s.whatsapp.sent(ADA))
        assert s.model.seen == ["hello again"]


def test_a_long_reply_is_split_at_whatsapps_limit(stack):
    paragraphs = [f"paragraph {i} " + "word " * 300 for i in range(5)]
    stack.model.before = lambda messages: __import__("core.messages", fromlist=["Message"]).Message(
        role="assistant", content="\n\n".join(paragraphs))
    stack.whatsapp_post(stack.whatsapp.message_payload("write a lot"))
    stack.wait(stack.settled)
    sent = stack.whatsapp.sent(ADA)
    assert len(sent) >= 2 and all(len(part) <= 4096 for part in sent)
    assert "\n\n".join(sent).split() == "\n\n".join(paragraphs).split()


def test_a_throttled_send_is_retried_and_sent_once(stack):
    stack.whatsapp.fail_next(times=1, status=400, code=130429)
    stack.whatsapp_post(stack.whatsapp.message_payload("hello"))
    stack.wait(lambda: stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"))
    row = stack.rt.store.db.one("SELECT status, last_error FROM deliveries")
    assert row["status"] == "pending" and "130429" in row["last_error"]
    assert stack.whatsapp.sent() == []
    stack.rt.store.db.execute("UPDATE deliveries SET next_attempt_at = 0")
    asyncio.run(stack.rt.delivery.sweep())
    asyncio.run(stack.rt.delivery.sweep())
    assert stack.whatsapp.sent(ADA) == ["re: hello"]


def test_a_refused_token_is_not_retried(stack):
    stack.whatsapp.token = "rotated"
    stack.whatsapp_post(stack.whatsapp.message_payload("hello"))
    stack.wait(lambda: stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE status = 'failed'"))
    assert "190" in stack.rt.store.db.scalar("SELECT last_error FROM deliveries")


def tick(rt):
    async def go():
        await cron.tick(rt)
        await rt.dispatcher.idle()

    asyncio.run(go())


def test_a_cron_job_delivers_there_inside_the_window_and_is_undeliverable_outside(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock) as s:
        s.whatsapp_post(s.whatsapp.message_payload("hi"))
        s.wait(lambda: s.whatsapp.sent(ADA))
        s.wait(s.settled)
        job = make_job(s.rt.store, s.rt.settings, schedule="every 5h", at=NOW,
                       account=f"whatsapp:{ADA}", prompt="say hi", deliver="whatsapp",
                       name="greeter")
        clock.set(NOW + timedelta(hours=5))
        tick(s.rt)
        s.wait(lambda: len(s.whatsapp.sent(ADA)) == 2)
        assert s.whatsapp.sent(ADA)[1].startswith("⏰ greeter")

        clock.set(NOW + timedelta(hours=25))  # a day after Ada last wrote
        tick(s.rt)
        s.wait(s.settled)
        runs = CronJobs(s.rt.store).runs(job.user_id, job.id)
        latest = max(runs, key=lambda run: run.scheduled_for)
        assert latest.delivery.status == "failed"
        assert "24-hour reply window" in latest.delivery.last_error
        assert len(s.whatsapp.sent(ADA)) == 2  # nothing sent, nothing retried
        assert s.rt.store.deliveries.due() == []


def test_meta_refusing_outside_the_window_is_recorded_not_retried(stack):
    stack.whatsapp.close_window(ADA)
    stack.whatsapp_post(stack.whatsapp.message_payload("hello"))
    stack.wait(lambda: stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE status = 'failed'"))
    assert "131047" in stack.rt.store.db.scalar("SELECT last_error FROM deliveries")


def test_link_joins_a_whatsapp_account_to_a_telegram_one(iris_home):
    model = EchoModel()
    prompts = []
    model.before = lambda messages: prompts.append(messages[0].content)
    with platform_stack(iris_home, model=model, IRIS_WHATSAPP_ACCESS="pairing") as s:
        s.telegram_post(s.telegram.make_update("I'm Ada"))
        s.wait(lambda: s.telegram.sent_messages(4242))
        s.wait(s.settled)
        store = s.rt.store
        ada = store.users.resolve("telegram:4242")
        MemoryBook(store).write(ada, [op("add", "Ada's codename is Falcon.")],
                                limits=Limits(memory=2_200, user=1_375),
                                author=Author(provenance="user", who="test"))
        s.telegram_post(s.telegram.make_update("/link"))
        s.wait(lambda: len(s.telegram.sent_messages(4242)) == 2)
        issued = s.telegram.sent_messages(4242)[1]["text"]
        code = issued.split("link code is ", 1)[1].split(" ", 1)[0].strip("<>/b.")
        s.whatsapp_post(s.whatsapp.message_payload(f"/link {code}"))
        s.wait(lambda: s.whatsapp.sent(ADA))
        assert s.whatsapp.sent(ADA)[0].startswith(f"Linked whatsapp:{ADA} with telegram:4242")
        # the merge itself runs after the turn, as an after-turn hook
        s.wait(lambda: store.users.resolve(f"whatsapp:{ADA}") == ada)
        s.whatsapp_post(s.whatsapp.message_payload("what is my codename?"))
        s.wait(lambda: len(s.whatsapp.sent(ADA)) == 2)
        assert "Ada's codename is Falcon." in prompts[-1]
        chats = {session.chat_key for session in store.sessions.list(ada)}
        assert {"telegram:4242", f"whatsapp:{ADA}"} <= chats


def test_the_new_webhook_modules_import_no_heavy_sdk():
    """WhatsApp, Discord and email acknowledge without the model, cloud or client SDKs; their
    senders' httpx and smtplib load only when a reply goes out."""
    code = ("import sys, functions.whatsapp, functions.discord, functions.email_webhook;"
            "print([m for m in ('litellm', 'mcp', 'modal', 'telegram', 'boto3', 'daytona',"
            " 'httpx', 'smtplib', 'aiosmtpd') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_a_voice_note_is_fetched_from_the_graph_api_and_transcribed(iris_home):
    from iris_testing.server import serve
    from tests.functions.test_voice import FakeWhisper

    whisper = FakeWhisper()
    with serve(whisper.app) as server, platform_stack(
        iris_home, IRIS_TRANSCRIPTION_MODEL="openai/whisper-1",
        IRIS_TRANSCRIPTION_API_BASE=f"{server.url}/v1", IRIS_TRANSCRIPTION_API_KEY="sk-t",
    ) as s:
        s.whatsapp.add_media("1029384756", b"OggS-whatsapp-voice", "audio/ogg")
        voice = s.whatsapp.message_payload(None, kind="audio", media={
            "id": "1029384756", "mime_type": "audio/ogg; codecs=opus", "voice": True})
        assert s.whatsapp_post(voice).json()["statuses"] == ["recorded"]
        s.wait(lambda: s.whatsapp.sent(ADA), timeout=60)
        assert whisper.uploads == [("whisper-1", "voice.ogg", b"OggS-whatsapp-voice")]
        assert s.whatsapp.sent(ADA) == ["re: [voice note] what is on my calendar"]
