"""SMS through Twilio over real HTTP: signed form webhooks → Iris → worker → Iris' SMS sender →
the fake Messages API on loopback (iris_testing/twilio_api.py)."""

import asyncio
import subprocess
import sys
from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.messages import Message
from core.platforms.sms import CUT_NOTE, sms_parts
from core.platforms.sms_segments import segments
from functions.sms import signature
from iris_testing.images import make_png
from iris_testing.platform_stack import PUBLIC_URL, TWILIO_TOKEN, EchoModel, platform_stack
from iris_testing.twilio_api import PERSON
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import make_job
from tests.functions.clarify_common import ASK, user_turns
from tests.functions.test_line import tick


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def test_the_signature_matches_twilios_published_vectors():
    # the vectors of Twilio's own validators (twilio-php tests/Twilio/Unit/Security/
    # RequestValidatorTest.php): auth token 12345, this URL and these parameters
    url = "https://mycompany.com/myapp.php?foo=1&bar=2"
    params = [
        ("CallSid", "CA1234567890ABCDE"),
        ("Caller", "+14158675309"),
        ("Digits", "1234"),
        ("From", "+14158675309"),
        ("To", "+18005551212"),
    ]
    assert signature("12345", url, params) == "RSOYDt4T1cUTdK1PDd93/VVr8B8="
    assert signature("12345", url, params[::-1]) == "RSOYDt4T1cUTdK1PDd93/VVr8B8="
    repeated = [
        ("Sid", "CA123"),
        ("SidAccount", "AC123"),
        ("Digits", "5678"),
        ("Digits", "1234"),
        ("Digits", "1234"),
    ]
    assert signature("12345", url, repeated) == "IK+Dwps556ElfBT0I3Rgjkr1wJU="
    assert signature("12345", url + "&x=1", params) != "RSOYDt4T1cUTdK1PDd93/VVr8B8="


def test_a_message_is_answered_by_sms_in_plain_text(stack):
    response = stack.sms_post(stack.twilio.inbound("make **this** bold"))
    assert response.status_code == 200 and response.headers["x-iris-status"] == "recorded"
    assert response.headers["content-type"].startswith("text/xml")
    assert "<Response/>" in response.text
    stack.wait(lambda: stack.twilio.sent(PERSON))
    assert stack.twilio.sent(PERSON) == ["re: make this bold"]


def test_forged_or_unsigned_or_wrong_url_requests_are_refused_and_store_nothing(stack):
    form = stack.twilio.inbound("hello")
    assert stack.sms_post(form, token="not-the-auth-token").status_code == 403
    assert stack.sms_post(form, token=None).status_code == 403
    # signed for the loopback URL Iris sees, not the public one Twilio calls
    assert stack.sms_post(form, url=f"{stack.url}/sms/webhook").status_code == 403
    tampered = stack.twilio.sign(PUBLIC_URL + "/sms/webhook", form, TWILIO_TOKEN)
    response = stack.http.post(
        f"{stack.url}/sms/webhook", data={**form, "Body": "evil"}, headers=tampered
    )
    assert response.status_code == 403
    assert count(stack) == 0 and count(stack, "users") == 0 and stack.model.seen == []


def test_without_the_public_url_the_webhook_says_what_is_missing(iris_home):
    with platform_stack(iris_home, IRIS_PUBLIC_URL="") as s:
        response = s.sms_post(s.twilio.inbound("hello"))
        assert response.status_code == 503 and "IRIS_PUBLIC_URL" in response.text


def test_a_resent_webhook_runs_one_turn_and_sends_one_reply(stack):
    form = stack.twilio.inbound("once please")
    for _ in range(3):
        assert stack.sms_post(form).status_code == 200
    stack.wait(stack.settled)
    stack.wait(lambda: stack.twilio.sent(PERSON))
    assert stack.model.seen == ["once please"] and stack.twilio.sent(PERSON) == ["re: once please"]


def test_a_stranger_gets_a_pairing_code_and_after_approval_a_reply(iris_home):
    with platform_stack(iris_home, IRIS_SMS_ACCESS="pairing") as s:
        assert s.sms_post(s.twilio.inbound("hello?")).headers["x-iris-status"] == "denied"
        s.wait(lambda: s.twilio.sent(PERSON))
        (answer,) = s.twilio.sent(PERSON)
        assert "pairing code" in answer.lower() and count(s) == 0 and s.model.seen == []
        code = answer.split("pairing code is ", 1)[1].split(" ", 1)[0]
        from core.identity.pairing import Pairing

        Pairing(s.rt.store).approve(code, by="cli:operator")
        assert s.sms_post(s.twilio.inbound("hello again")).headers["x-iris-status"] == "recorded"
        s.wait(lambda: "re: hello again" in s.twilio.sent(PERSON))


def test_segments_follow_gsm7_and_ucs2_rules():
    assert [segments("a" * n) for n in (160, 161, 306, 307)] == [1, 2, 2, 3]
    assert [segments("ж" * n) for n in (70, 71, 134, 135)] == [1, 2, 2, 3]
    assert segments("€" * 80) == 1 and segments("€" * 81) == 2  # escape characters count two
    assert segments("a" * 159 + "ж") == 3  # one non-GSM character makes it all UCS-2


def test_a_long_reply_is_split_by_segments_and_capped(stack):
    long_text = "\n\n".join(f"part {i} " + "word " * 250 for i in range(8))
    stack.model.before = lambda messages: Message(role="assistant", content=long_text)
    stack.sms_post(stack.twilio.inbound("write a lot"))
    stack.wait(lambda: stack.settled() and stack.twilio.sent(PERSON))
    sent = stack.twilio.sent(PERSON)
    assert all(segments(body) <= 10 and len(body) <= 1600 for body in sent)
    assert sum(segments(body) for body in sent) <= 10  # IRIS_SMS_MAX_SEGMENTS default
    assert sent[-1].endswith(CUT_NOTE) and sent[0].startswith("part 0")


def test_the_segment_cap_is_a_setting():
    text = "\n\n".join(f"part {i} " + "word " * 250 for i in range(8))
    parts = sms_parts(text, 30)
    assert sum(segments(p.rendered) for p in parts) <= 30 and len(parts) >= 3
    assert parts[-1].rendered.endswith(CUT_NOTE)
    assert [p.rendered for p in sms_parts("short", 30)] == ["short"]


def test_a_rate_limited_send_is_retried_and_sent_once(stack):
    stack.twilio.fail_next(1)
    stack.sms_post(stack.twilio.inbound("hello"))
    stack.wait(
        lambda: stack.rt.store.db.scalar(
            "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"
        )
    )
    assert "20429" in stack.rt.store.db.scalar("SELECT last_error FROM deliveries")
    stack.rt.store.db.execute("UPDATE deliveries SET next_attempt_at = 0")
    asyncio.run(stack.rt.delivery.sweep())
    asyncio.run(stack.rt.delivery.sweep())
    assert stack.twilio.sent(PERSON) == ["re: hello"]


def test_a_question_is_answered_by_its_number(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        stack.sms_post(stack.twilio.inbound("order me a coffee"))
        stack.wait(lambda: stack.twilio.sent(PERSON) and stack.settled())
        (question,) = stack.twilio.sent(PERSON)
        assert question.startswith("Which size?") and "2. Large" in question
        llm.reply("Large it is.")
        stack.sms_post(stack.twilio.inbound("2"))
        stack.wait(lambda: len(stack.twilio.sent(PERSON)) == 2 and stack.settled())
        assert stack.twilio.sent(PERSON)[1] == "Large it is."
        assert "Large" in user_turns(llm)[-1]


def test_an_mms_image_is_fetched_with_the_account_credentials(stack):
    png = make_png()
    url = stack.twilio.add_media(png, "image/png")
    form = stack.twilio.inbound("", media=[(url, "image/png")])
    assert stack.sms_post(form).headers["x-iris-status"] == "recorded"
    stack.wait(lambda: stack.twilio.sent(PERSON) and stack.settled())
    user = stack.rt.store.users.resolve(f"sms:{PERSON}")
    (entry,) = stack.rt.store.inbox.latest_messages(user, limit=5)
    (attachment,) = entry.attachments
    assert attachment.kind == "image"
    sender = stack.rt.senders["sms"]
    assert asyncio.run(sender.download(attachment.ref)) == png
    from core.intake.documents import DocumentRefused

    with pytest.raises(DocumentRefused):  # the credentials go to Twilio's host only
        asyncio.run(sender.download("https://evil.example/2010-04-01/Accounts/x"))


def test_an_mms_document_is_saved_and_its_text_read(stack):
    text = b"Tide table\nHigh water at 06:42 in Wells.\n"
    url = stack.twilio.add_media(text, "text/plain")
    form = stack.twilio.inbound("summarise this", media=[(url, "text/plain")])
    assert stack.sms_post(form).headers["x-iris-status"] == "recorded"
    stack.wait(lambda: stack.twilio.sent(PERSON) and stack.settled())
    (seen,) = stack.model.seen
    assert seen.startswith("summarise this\n\n[the user sent a document, saved as inbox/mms-1.txt")
    assert "High water at 06:42 in Wells." in seen and '<untrusted source="document">' in seen
    user = stack.rt.store.users.resolve(f"sms:{PERSON}")
    box = stack.rt.settings.home / "workspaces" / user / "inbox"
    assert (box / "mms-1.txt").read_bytes() == text


def test_an_oversized_or_foreign_mms_document_is_not_saved(stack):
    big = stack.twilio.add_media(b"%PDF-1.4\n" + b"0" * (21 * 1024 * 1024), "application/pdf")
    foreign = "https://evil.example/2010-04-01/Accounts/x/Messages/y/Media/z"
    form = stack.twilio.inbound(
        "two files", media=[(big, "application/pdf"), (foreign, "text/csv")]
    )
    stack.sms_post(form)
    stack.wait(lambda: stack.twilio.sent(PERSON) and stack.settled())
    (seen,) = stack.model.seen
    assert "[the user sent 'mms-1.pdf', which was not saved: it is 21.0 MB, over the 20 MB" in seen
    assert "[the user sent 'mms-2.csv', which was not saved: it is not a Twilio media URL" in seen
    user = stack.rt.store.users.resolve(f"sms:{PERSON}")
    assert not (stack.rt.settings.home / "workspaces" / user / "inbox").exists()


def test_a_cron_job_delivers_there(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock) as s:
        s.sms_post(s.twilio.inbound("hi"))
        s.wait(lambda: s.twilio.sent(PERSON))
        s.wait(s.settled)
        make_job(
            s.rt.store,
            s.rt.settings,
            schedule="every 5h",
            at=NOW,
            account=f"sms:{PERSON}",
            prompt="say hi",
            deliver="sms",
            name="greeter",
        )
        clock.set(NOW + timedelta(hours=5))
        tick(s.rt)
        s.wait(lambda: len(s.twilio.sent(PERSON)) == 2)
        assert s.twilio.sent(PERSON)[1].startswith("⏰ greeter")


def test_link_joins_an_sms_number_to_a_telegram_account(iris_home):
    with platform_stack(iris_home, model=EchoModel(), IRIS_SMS_ACCESS="pairing") as s:
        s.telegram_post(s.telegram.make_update("I'm Ada"))
        s.wait(lambda: s.telegram.sent_messages(4242))
        s.wait(s.settled)
        ada = s.rt.store.users.resolve("telegram:4242")
        s.telegram_post(s.telegram.make_update("/link"))
        s.wait(lambda: len(s.telegram.sent_messages(4242)) == 2)
        issued = s.telegram.sent_messages(4242)[1]["text"]
        code = issued.split("link code is ", 1)[1].split(" ", 1)[0].strip("<>/b.")
        s.sms_post(s.twilio.inbound(f"/link {code}"))
        s.wait(lambda: s.twilio.sent(PERSON))
        assert s.twilio.sent(PERSON)[0].startswith(f"Linked sms:{PERSON} with telegram:4242")
        s.wait(lambda: s.rt.store.users.resolve(f"sms:{PERSON}") == ada)


def test_the_sms_webhook_module_imports_no_heavy_sdk():
    code = (
        "import sys, functions.sms;"
        "print([m for m in ('litellm', 'mcp', 'modal', 'telegram', 'boto3', 'daytona',"
        " 'httpx') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
