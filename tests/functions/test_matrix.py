"""Matrix as an application service over real HTTP: transactions pushed with the hs_token →
Iris → worker → Iris' Matrix sender → the fake homeserver on loopback
(iris_testing/matrix_api.py)."""

import asyncio
import subprocess
import sys
from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.messages import Message
from core.platforms.matrix import MESSAGE_LIMIT, MatrixSender
from iris_testing.matrix_api import BOT, PERSON, ROOM, FakeHomeserver
from iris_testing.platform_stack import MATRIX_AS_TOKEN, EchoModel, platform_stack
from iris_testing.server import start_server
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


def put(stack, *events, **kw):
    return stack.matrix_put(stack.matrix.transaction(*events), **kw)


def test_a_message_is_answered_in_its_room(stack):
    response = put(stack, stack.matrix.message_event("make **this** plain"))
    assert (response.status_code, response.json()) == (200, {})
    stack.wait(lambda: stack.matrix.sent(ROOM))
    assert stack.matrix.sent(ROOM) == ["re: make this plain"]


def test_the_hs_token_is_checked_before_anything_is_read(stack):
    event = stack.matrix.message_event("hello")
    assert put(stack, event, token=None).status_code == 401
    assert put(stack, event, token="not-the-hs-token").status_code == 403
    assert put(stack, event, token="not-the-hs-token", legacy=True).status_code == 403
    assert count(stack) == 0 and count(stack, "users") == 0 and stack.model.seen == []
    assert put(stack, event, legacy=True).status_code == 200  # the legacy query parameter


def test_a_transaction_sent_again_records_nothing_new(stack):
    body = stack.matrix.transaction(stack.matrix.message_event("once please"))
    for _ in range(3):
        assert stack.matrix_put(body, txn="txn-7").status_code == 200
    stack.wait(stack.settled)
    stack.wait(lambda: stack.matrix.sent(ROOM))
    assert stack.model.seen == ["once please"] and stack.matrix.sent(ROOM) == ["re: once please"]


def test_iris_own_messages_and_notices_are_not_read(stack):
    own = stack.matrix.message_event("my own echo", sender=BOT)
    notice = stack.matrix.message_event("a bot's notice", msgtype="m.notice")
    assert put(stack, own, notice).status_code == 200
    assert count(stack) == 0


def test_an_invitation_is_accepted(stack):
    room = "!newroom:example.org"
    assert put(stack, stack.matrix.invite_event(room)).status_code == 200
    stack.wait(lambda: stack.matrix.joined == [room])


def test_a_stranger_gets_a_pairing_code_and_after_approval_a_reply(iris_home):
    with platform_stack(iris_home, IRIS_MATRIX_ACCESS="pairing") as s:
        put(s, s.matrix.message_event("hello?"))
        s.wait(lambda: s.matrix.sent(ROOM))
        (answer,) = s.matrix.sent(ROOM)
        assert "pairing code" in answer.lower() and count(s) == 0 and s.model.seen == []
        code = answer.split("pairing code is ", 1)[1].split(" ", 1)[0]
        from core.identity.pairing import Pairing

        Pairing(s.rt.store).approve(code, by="cli:operator")
        put(s, s.matrix.message_event("hello again"))
        s.wait(lambda: "re: hello again" in s.matrix.sent(ROOM))


def test_a_long_reply_is_split(stack):
    long_text = "\n\n".join(f"paragraph {i} " + "word " * 1000 for i in range(8))
    stack.model.before = lambda messages: Message(role="assistant", content=long_text)
    put(stack, stack.matrix.message_event("write a lot"))
    stack.wait(lambda: stack.settled() and stack.matrix.sent(ROOM))
    sent = stack.matrix.sent(ROOM)
    assert len(sent) == 3 and all(len(body) <= MESSAGE_LIMIT for body in sent)
    assert "".join(sent).count("paragraph") == 8


def test_a_retried_send_reuses_its_transaction_id_and_is_not_shown_twice(iris_home):
    fake = FakeHomeserver(as_token=MATRIX_AS_TOKEN)
    server = start_server(fake.app)
    try:
        sender = MatrixSender(server.url, MATRIX_AS_TOKEN, BOT)
        from core.store.deliveries import Delivery

        delivery = Delivery(
            id=3,
            user_id="usr_a",
            source="turn:x",
            platform="matrix",
            chat_key=f"matrix:{ROOM}",
            target={"chat_id": ROOM},
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
        again = asyncio.run(sender.send_record(delivery))
        assert first == again and fake.sent(ROOM) == ["hello"]
    finally:
        server.server.should_exit = True
        server.thread.join(timeout=10)


def test_a_rate_limited_send_is_retried_and_sent_once(stack):
    stack.matrix.fail_next(1)
    put(stack, stack.matrix.message_event("hello"))
    stack.wait(
        lambda: stack.rt.store.db.scalar(
            "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"
        )
    )
    assert "M_LIMIT_EXCEEDED" in stack.rt.store.db.scalar("SELECT last_error FROM deliveries")
    stack.rt.store.db.execute("UPDATE deliveries SET next_attempt_at = 0")
    asyncio.run(stack.rt.delivery.sweep())
    asyncio.run(stack.rt.delivery.sweep())
    assert stack.matrix.sent(ROOM) == ["re: hello"]


def test_a_question_is_answered_by_its_number(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with platform_stack(iris_home, model=model) as stack:
        put(stack, stack.matrix.message_event("order me a coffee"))
        stack.wait(lambda: stack.matrix.sent(ROOM) and stack.settled())
        (question,) = stack.matrix.sent(ROOM)
        assert question.startswith("Which size?") and "2. Large" in question
        llm.reply("Large it is.")
        put(stack, stack.matrix.message_event("2"), txn="t2")
        stack.wait(lambda: len(stack.matrix.sent(ROOM)) == 2 and stack.settled())
        assert stack.matrix.sent(ROOM)[1] == "Large it is."
        assert "Large" in user_turns(llm)[-1]


def test_a_cron_job_delivers_there(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock) as s:
        put(s, s.matrix.message_event("hi"))
        s.wait(lambda: s.matrix.sent(ROOM))
        s.wait(s.settled)
        make_job(
            s.rt.store,
            s.rt.settings,
            schedule="every 5h",
            at=NOW,
            account=f"matrix:{PERSON}",
            prompt="say hi",
            deliver="matrix",
            name="greeter",
        )
        clock.set(NOW + timedelta(hours=5))
        tick(s.rt)
        s.wait(lambda: len(s.matrix.sent(ROOM)) == 2)
        assert s.matrix.sent(ROOM)[1].startswith("⏰ greeter")


def test_link_joins_a_matrix_account_to_a_telegram_one(iris_home):
    with platform_stack(iris_home, model=EchoModel(), IRIS_MATRIX_ACCESS="pairing") as s:
        s.telegram_post(s.telegram.make_update("I'm Ada"))
        s.wait(lambda: s.telegram.sent_messages(4242))
        s.wait(s.settled)
        ada = s.rt.store.users.resolve("telegram:4242")
        s.telegram_post(s.telegram.make_update("/link"))
        s.wait(lambda: len(s.telegram.sent_messages(4242)) == 2)
        issued = s.telegram.sent_messages(4242)[1]["text"]
        code = issued.split("link code is ", 1)[1].split(" ", 1)[0].strip("<>/b.")
        put(s, s.matrix.message_event(f"/link {code}"))
        s.wait(lambda: s.matrix.sent(ROOM))
        assert s.matrix.sent(ROOM)[0].startswith(f"Linked matrix:{PERSON} with telegram:4242")
        s.wait(lambda: s.rt.store.users.resolve(f"matrix:{PERSON}") == ada)


def test_the_matrix_webhook_module_imports_no_heavy_sdk():
    code = (
        "import sys, functions.matrix;"
        "print([m for m in ('litellm', 'mcp', 'modal', 'telegram', 'boto3', 'daytona',"
        " 'httpx') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
