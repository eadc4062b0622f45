"""The LINE Messaging API webhook through real HTTP: signed webhooks → Iris → worker → Iris'
LINE sender → the fake Messaging API on loopback (iris_testing/line_api.py)."""

import asyncio
import json
import subprocess
import sys
from datetime import timedelta

import pytest

from core.asking.clarify import button_data
from core.clock import ManualClock
from core.memory.book import Limits, MemoryBook
from core.memory.ops import Author
from core.messages import Message
from core.platforms.line import MESSAGE_LIMIT, LineSender
from core.store.deliveries import Delivery
from functions import cron
from iris_testing.images import make_png
from iris_testing.line_api import USER, FakeLine
from iris_testing.platform_stack import LINE_SECRET, LINE_TOKEN, EchoModel, platform_stack
from iris_testing.server import start_server
from tests.clocks import NOW
from tests.core.memory.helpers import op
from tests.core.scheduler.cron_helpers import make_job
from tests.functions.clarify_common import ASK, user_turns


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def post(stack, *events):
    return stack.line_post(stack.line.webhook(*events))


def test_a_message_is_answered_with_its_reply_token_in_plain_text(stack):
    response = post(stack, stack.line.message_event("make **this** bold"))
    assert response.status_code == 200 and response.json()["statuses"] == ["recorded"]
    stack.wait(lambda: stack.line.sent(USER))
    assert stack.line.sent(USER, via="reply") == ["re: make this bold"]
    assert stack.line.sent(USER, via="push") == []


def test_the_console_verify_request_has_no_events_and_is_acknowledged(stack):
    response = stack.line_post({"destination": "U" + "0" * 32, "events": []})
    assert response.status_code == 200 and response.json()["statuses"] == []


def test_forged_or_missing_signatures_are_refused_and_store_nothing(stack):
    payload = stack.line.webhook(stack.line.message_event("hello"))
    assert stack.line_post(payload, secret="not-the-channel-secret").status_code == 401
    assert stack.line_post(payload, secret=None).status_code == 401
    body = json.dumps(payload).encode()
    signed_other = FakeLine.sign(body + b" ", LINE_SECRET)
    tampered = stack.http.post(
        f"{stack.url}/line/webhook",
        content=body,
        headers={"Content-Type": "application/json", **signed_other},
    )
    assert tampered.status_code == 401
    assert count(stack) == 0 and count(stack, "users") == 0 and stack.model.seen == []


def test_a_malformed_body_is_refused_after_the_signature(stack):
    body = b'{"events": [{"type": 5}]}'
    response = stack.http.post(
        f"{stack.url}/line/webhook",
        content=body,
        headers={"Content-Type": "application/json", **FakeLine.sign(body, LINE_SECRET)},
    )
    assert response.status_code == 400 and count(stack) == 0


def test_a_redelivered_event_runs_one_turn_and_gets_one_reply(stack):
    event = stack.line.message_event("once please")
    again = {**event, "deliveryContext": {"isRedelivery": True}}
    for payload in (event, again, again):
        assert post(stack, payload).status_code == 200
    stack.wait(stack.settled)
    stack.wait(lambda: stack.line.sent(USER))
    assert stack.model.seen == ["once please"]
    assert stack.line.sent(USER) == ["re: once please"]


def test_an_expired_reply_token_falls_back_to_a_push(stack):
    event = stack.line.message_event("late", timestamp_ms=0)  # long past the token's minute
    post(stack, event)
    stack.wait(lambda: stack.line.sent(USER))
    assert stack.line.sent(USER, via="push") == ["re: late"]
    used = stack.line.message_event("used token")
    stack.line.expire(used["replyToken"])  # fresh by the clock, but LINE refuses it
    post(stack, used)
    stack.wait(lambda: len(stack.line.sent(USER)) == 2)
    assert stack.line.sent(USER, via="push") == ["re: late", "re: used token"]


def test_a_stranger_gets_a_pairing_code_and_after_approval_a_reply(iris_home):
    with platform_stack(iris_home, IRIS_LINE_ACCESS="pairing") as s:
        assert post(s, s.line.message_event("hello?")).json()["statuses"] == ["denied"]
        s.wait(lambda: s.line.sent(USER))
        (answer,) = s.line.sent(USER)
        assert "pairing code" in answer.lower() and count(s) == 0 and s.model.seen == []
        code = answer.split("pairing code is ", 1)[1].split(" ", 1)[0]
        from core.identity.pairing import Pairing

        Pairing(s.rt.store).approve(code, by="cli:operator")
        assert post(s, s.line.message_event("hello again")).json()["statuses"] == ["recorded"]
        s.wait(lambda: "re: hello again" in s.line.sent(USER))
        assert s.model.seen == ["hello again"]


def test_a_long_reply_is_split_in_messages_of_5000_five_to_a_call(stack):
    paragraphs = [f"paragraph {i} " + "word " * 900 for i in range(7)]
    long_text = "\n\n".join(paragraphs)
    stack.model.before = lambda messages: Message(role="assistant", content=long_text)
    post(stack, stack.line.message_event("write a lot"))
    stack.wait(lambda: stack.settled() and stack.line.sent(USER))
    sent = stack.line.sent(USER)
    assert len(sent) == 7 and all(len(text) <= MESSAGE_LIMIT for text in sent)
    assert [text.split(" ", 2)[1] for text in sent] == [str(i) for i in range(7)]
    assert len(stack.line.sent(USER, via="reply")) == 5  # one reply call of five
    assert len(stack.line.sent(USER, via="push")) == 2  # the rest pushed
    assert [kind for kind, _ in stack.line.calls] == ["reply", "push"]


def test_a_retried_push_is_not_sent_twice(iris_home):
    """A push LINE accepted but whose answer was lost: the retry carries the same retry key,
    LINE answers 409 with the first call's messages, nothing goes out twice."""
    fake = FakeLine(token=LINE_TOKEN, channel_secret=LINE_SECRET)
    server = start_server(fake.app)
    try:
        sender = LineSender(LINE_TOKEN, server.url, server.url)
        delivery = Delivery(
            id=7,
            user_id="usr_a",
            source="turn:x",
            platform="line",
            chat_key=f"line:{USER}",
            target={"chat_id": USER},
            text="hello",
            status="pending",
            attempts=1,
            next_attempt_at=0.0,
            last_error=None,
            platform_ids=[],
            created_at=0.0,
            sent_at=None,
        )
        first = asyncio.run(sender.send_record(delivery))
        retried = asyncio.run(sender.send_record(Delivery(**{**delivery.__dict__, "attempts": 2})))
        assert first == retried and fake.sent(USER) == ["hello"]
        other = asyncio.run(sender.send_record(Delivery(**{**delivery.__dict__, "id": 8})))
        assert other != first and fake.sent(USER) == ["hello", "hello"]
    finally:
        server.request_stop()
        server.thread.join(timeout=10)


def test_a_server_error_is_retried_and_sent_once(stack):
    stack.line.fail_next(1, status=500)
    post(stack, stack.line.message_event("hello", timestamp_ms=0))
    stack.wait(
        lambda: stack.rt.store.db.scalar(
            "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"
        )
    )
    row = stack.rt.store.db.one("SELECT status, last_error FROM deliveries")
    assert row["status"] == "pending" and "500" in row["last_error"]
    assert stack.line.sent(USER) == []
    stack.rt.store.db.execute("UPDATE deliveries SET next_attempt_at = 0")
    asyncio.run(stack.rt.delivery.sweep())
    asyncio.run(stack.rt.delivery.sweep())
    assert stack.line.sent(USER) == ["re: hello"]


def test_a_question_is_answered_by_a_quick_reply_button(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        line = stack.line
        post(stack, line.message_event("order me a coffee"))
        stack.wait(lambda: line.sent(USER) and stack.settled())
        (question,) = line.sent_messages()
        assert question["text"].startswith("Which size?")
        items = question["quickReply"]["items"]
        assert [i["action"]["label"] for i in items] == ["Small", "Large"]
        llm.reply("Large it is.")
        press = line.postback_event(items[1]["action"]["data"])
        assert post(stack, press).json()["statuses"] == ["recorded"]
        stack.wait(lambda: len(line.sent(USER)) == 2 and stack.settled())
        assert line.sent(USER)[1] == "Large it is."
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'
        assert post(stack, press).json()["statuses"] == ["ignored"]  # pressed again
        forged = line.postback_event(button_data("nosuchquestion", 1))
        assert post(stack, forged).json()["statuses"] == ["ignored"]
        assert count(stack) == 2 and len(llm.requests) == 2


def tick(rt):
    async def go():
        await cron.tick(rt)
        await rt.dispatcher.idle()

    asyncio.run(go())


def test_a_cron_job_delivers_there_by_push(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock) as s:
        post(s, s.line.message_event("hi"))
        s.wait(lambda: s.line.sent(USER))
        s.wait(s.settled)
        make_job(
            s.rt.store,
            s.rt.settings,
            schedule="every 5h",
            at=NOW,
            account=f"line:{USER}",
            prompt="say hi",
            deliver="line",
            name="greeter",
        )
        clock.set(NOW + timedelta(hours=5))
        tick(s.rt)
        s.wait(lambda: len(s.line.sent(USER)) == 2)
        assert s.line.sent(USER, via="push")[0].startswith("⏰ greeter")


def test_link_joins_a_line_account_to_a_telegram_one(iris_home):
    model = EchoModel()
    prompts = []
    model.before = lambda messages: prompts.append(messages[0].content)
    with platform_stack(iris_home, model=model, IRIS_LINE_ACCESS="pairing") as s:
        s.telegram_post(s.telegram.make_update("I'm Ada"))
        s.wait(lambda: s.telegram.sent_messages(4242))
        s.wait(s.settled)
        store = s.rt.store
        ada = store.users.resolve("telegram:4242")
        MemoryBook(store).write(
            ada,
            [op("add", "Ada's codename is Falcon.")],
            limits=Limits(memory=2_200, user=1_375),
            author=Author(provenance="user", who="test"),
        )
        s.telegram_post(s.telegram.make_update("/link"))
        s.wait(lambda: len(s.telegram.sent_messages(4242)) == 2)
        issued = s.telegram.sent_messages(4242)[1]["text"]
        code = issued.split("link code is ", 1)[1].split(" ", 1)[0].strip("<>/b.")
        post(s, s.line.message_event(f"/link {code}"))
        s.wait(lambda: s.line.sent(USER))
        assert s.line.sent(USER)[0].startswith(f"Linked line:{USER} with telegram:4242")
        s.wait(lambda: store.users.resolve(f"line:{USER}") == ada)
        post(s, s.line.message_event("what is my codename?"))
        s.wait(lambda: len(s.line.sent(USER)) == 2)
        assert "Ada's codename is Falcon." in prompts[-1]


def test_an_image_and_a_file_are_fetched_from_the_content_endpoint(stack):
    png = make_png()
    stack.line.add_content("4680000000901", png)
    stack.line.add_content("4680000000902", b"harbour,depth_m\nWells,2.4\n")
    image = stack.line.message_event(
        None, kind="image", message_id="4680000000901", contentProvider={"type": "line"}
    )
    document = stack.line.message_event(
        None, kind="file", message_id="4680000000902", fileName="harbours.csv", fileSize=26
    )
    assert post(stack, image, document).json()["statuses"] == ["recorded", "recorded"]
    stack.wait(lambda: len(stack.line.sent(USER)) == 2 and stack.settled())
    user = stack.rt.store.users.resolve(f"line:{USER}")
    found = [a for e in stack.rt.store.inbox.latest_messages(user, limit=10) for a in e.attachments]
    assert sorted((a.kind, a.ref) for a in found) == [
        ("file", "4680000000902"),
        ("image", "4680000000901"),
    ]
    assert asyncio.run(stack.rt.senders["line"].download("4680000000901")) == png
    assert any("Wells,2.4" in seen for seen in stack.model.seen)


def test_the_line_webhook_module_imports_no_heavy_sdk():
    code = (
        "import sys, functions.line;"
        "print([m for m in ('litellm', 'mcp', 'modal', 'telegram', 'boto3', 'daytona',"
        " 'httpx') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_in_a_group_only_mentions_are_answered_and_the_group_owns_its_data(stack):
    group = "C" + "1" * 32
    plain = stack.line.message_event("chatting among ourselves", group=group)
    mention = {"mentionees": [{"index": 0, "length": 5, "type": "user", "isSelf": True}]}
    asked = stack.line.message_event("@Iris hello group", group=group, mention=mention)
    assert post(stack, plain, asked).json()["statuses"] == ["ignored", "recorded"]
    stack.wait(lambda: stack.line.sent(group) and stack.settled())
    assert stack.line.sent(group) == ["re: @Iris hello group"] and stack.line.sent(USER) == []
    owner = stack.rt.store.users.for_account(f"line:group:{group}", kind="group")
    assert stack.rt.store.inbox.latest_messages(owner, limit=5)
