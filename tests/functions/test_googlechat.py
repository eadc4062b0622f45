"""Google Chat through real HTTP: events signed as Chat signs them (RS256 JWTs for either
audience, keys from the fake's JWKS) → Iris → worker → Iris' sender (a service account's JWT
bearer grant, then ``spaces.messages.create``) → the fake Google on loopback
(iris_testing/googlechat_api.py)."""

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.messages import Message
from functions import cron
from iris_testing.googlechat_api import FakeGoogleChat
from iris_testing.platform_stack import Stack, platform_stack
from iris_testing.server import serve
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import make_job
from tests.functions.clarify_common import ASK, user_turns

DM = "spaces/AAAAdm-ada"
URL_AUDIENCE = "https://iris.example.net/googlechat/events"


@contextmanager
def chat_stack(home, *, audience=None, env=None, **kwargs) -> Iterator[
        tuple[Stack, FakeGoogleChat]]:
    chat = FakeGoogleChat()
    with serve(chat.app) as server:
        chat.url = server.url
        variables = {**(chat.env(audience) if audience else chat.env()), **(env or {})}
        with platform_stack(home, **kwargs, **variables) as stack:
            yield stack, chat


@pytest.fixture
def both(iris_home):
    with chat_stack(iris_home) as running:
        yield running


def post(stack, chat, event, headers=None, **claims):
    body = json.dumps(event).encode()
    sent = headers if headers is not None else chat.headers(**claims)
    return stack.http.post(f"{stack.url}/googlechat/events", content=body, headers=sent)


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def test_a_message_is_acknowledged_empty_then_answered_in_its_thread(both):
    stack, chat = both
    event = chat.event("say **hi**")
    response = post(stack, chat, event)
    assert (response.status_code, response.json()) == (200, {})
    stack.wait(lambda: chat.messages(DM))
    (sent,) = chat.messages(DM)
    assert sent["text"] == "re: say *hi*"
    assert sent["thread"] == event["message"]["thread"]["name"]
    assert sent["replyOption"] == "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"


def test_forged_expired_or_misaddressed_events_are_refused(both):
    stack, chat = both
    event = chat.event("hello")
    forger = FakeGoogleChat()
    refusals = [
        post(stack, chat, event, headers=forger.headers()),
        post(stack, chat, event, now=NOW.timestamp()),
        post(stack, chat, event, audience="999999999999"),
        post(stack, chat, event, issuer="someone@evil.iam.gserviceaccount.com"),
        post(stack, chat, event, headers={"Content-Type": "application/json"}),
        post(stack, chat, event, headers={"Authorization": "Bearer x.y.z"}),
    ]
    import jwt

    none = jwt.encode({"iss": "chat@system.gserviceaccount.com", "aud": "123456789012",
                       "exp": 4102444800}, None, algorithm="none")
    refusals.append(post(stack, chat, event, headers={"Authorization": f"Bearer {none}"}))
    assert [r.status_code for r in refusals] == [401] * len(refusals)
    assert count(stack) == 0 and count(stack, "users") == 0 and stack.model.seen == []


def test_the_url_audience_takes_googles_id_token_from_chats_account_only(iris_home):
    with chat_stack(iris_home, audience=URL_AUDIENCE) as (stack, chat):
        assert post(stack, chat, chat.event("hello"), audience=URL_AUDIENCE).status_code == 200
        other = post(stack, chat, chat.event("hello"), audience=URL_AUDIENCE,
                     email="mallory@gmail.com")
        project = post(stack, chat, chat.event("hello"))  # the project-number kind
        assert (other.status_code, project.status_code) == (401, 401)
        stack.wait(lambda: chat.texts(DM) == ["re: hello"])
        assert count(stack) == 1


def test_a_redelivered_event_runs_one_turn_and_gets_one_reply(both):
    stack, chat = both
    event = chat.event("once")
    for _ in range(3):
        assert post(stack, chat, event).status_code == 200
    stack.wait(stack.settled)
    stack.wait(lambda: chat.messages(DM))
    assert stack.model.seen == ["once"] and chat.texts(DM) == ["re: once"]


def test_a_long_answer_is_split_within_the_4096_character_limit(both):
    stack, chat = both
    paragraphs = [f"part {i} " + "word " * 1500 for i in range(3)]
    stack.model.before = lambda messages: Message(role="assistant",
                                                  content="\n\n".join(paragraphs))
    post(stack, chat, chat.event("a lot"))
    stack.wait(stack.settled)
    sent = chat.texts(DM)
    assert len(sent) >= 4 and all(len(text) <= 4096 for text in sent)
    assert " ".join(sent).split() == " ".join(paragraphs).split()


def test_a_stranger_gets_a_pairing_code_then_is_answered(iris_home):
    with chat_stack(iris_home, env={"IRIS_GOOGLECHAT_ACCESS": "pairing"}) as (s, chat):
        assert post(s, chat, chat.event("hi")).status_code == 200
        s.wait(lambda: chat.messages(DM))
        assert "pairing code" in chat.texts(DM)[0].lower()
        assert count(s) == 0 and s.model.seen == []
        code = chat.texts(DM)[0].split("pairing code is ", 1)[1].split(" ", 1)[0]
        from core.identity.pairing import Pairing

        Pairing(s.rt.store).approve(code.strip("*`._"), by="cli:operator")
        post(s, chat, chat.event("hello again"))
        s.wait(lambda: "re: hello again" in chat.texts(DM))


def test_in_a_space_the_argument_text_is_read_and_the_space_owns_the_data(both):
    stack, chat = both
    space = "spaces/AAAAroom1"
    post(stack, chat, chat.event("what is 2+2?", space=space, dm=False))
    stack.wait(lambda: chat.messages(space))
    assert chat.texts(space) == ["re: [Ada] what is 2+2?"]
    scope = stack.rt.store.users.resolve(f"googlechat:group:{space}")
    assert stack.rt.store.users.get(scope).kind == "group"


def test_slash_commands_work_in_a_direct_message_and_in_a_space(both):
    stack, chat = both
    space = "spaces/AAAAroom2"
    post(stack, chat, chat.event("/help"))
    post(stack, chat, chat.event("/help", space=space, dm=False))
    stack.wait(lambda: chat.messages(DM) and chat.messages(space))
    for text in (chat.texts(DM)[0], chat.texts(space)[0]):
        assert "/memory" in text and "/new" in text
    assert stack.model.seen == []


def test_a_rate_limited_send_is_retried_not_doubled(both):
    stack, chat = both
    chat.rate_limit_next()
    post(stack, chat, chat.event("hello"))
    stack.wait(lambda: stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"))
    assert stack.rt.store.db.scalar("SELECT status FROM deliveries") == "pending"
    stack.rt.store.db.execute("UPDATE deliveries SET next_attempt_at = 0")
    asyncio.run(stack.rt.delivery.sweep())
    asyncio.run(stack.rt.delivery.sweep())
    assert chat.texts(DM) == ["re: hello"]


def test_a_question_is_answered_by_a_card_button(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with chat_stack(iris_home, model=model) as (stack, chat):
        post(stack, chat, chat.event("order me a coffee"))
        stack.wait(lambda: chat.messages(DM) and stack.settled())
        (card,) = chat.messages(DM)[0]["cardsV2"]
        buttons = card["card"]["sections"][0]["widgets"][0]["buttonList"]["buttons"]
        assert [b["text"] for b in buttons] == ["Small", "Large"]
        llm.reply("A large one it is.")
        click = chat.click(buttons[1]["onClick"]["action"])
        assert post(stack, chat, click).status_code == 200
        assert post(stack, chat, click).status_code == 200  # pressed twice
        stack.wait(lambda: len(chat.messages(DM)) == 2 and stack.settled())
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'
        assert user_turns(llm).count(user_turns(llm)[-1]) == 1
        assert chat.texts(DM)[1] == "A large one it is."


def test_a_cron_job_delivers_to_the_space(iris_home):
    clock = ManualClock(NOW)
    with chat_stack(iris_home, clock=clock) as (s, chat):
        post(s, chat, chat.event("hi"), now=NOW.timestamp())
        s.wait(lambda: chat.messages(DM))
        s.wait(s.settled)
        make_job(s.rt.store, s.rt.settings, schedule="every 1h", at=NOW,
                 account="googlechat:users/1001", prompt="say hi", deliver="googlechat",
                 name="greeter")
        clock.set(NOW + timedelta(hours=1))

        async def tick():
            await cron.tick(s.rt)
            await s.rt.dispatcher.idle()

        asyncio.run(tick())
        s.wait(lambda: len(chat.messages(DM)) == 2)
        message = chat.messages(DM)[1]
        assert message["text"].startswith("⏰ greeter") and message["thread"] is None


def test_link_joins_a_google_chat_account_to_a_telegram_one(iris_home):
    with chat_stack(iris_home, env={"IRIS_GOOGLECHAT_ACCESS": "pairing"}) as (s, chat):
        s.telegram_post(s.telegram.make_update("I'm Ada"))
        s.wait(lambda: s.telegram.sent_messages(4242))
        s.wait(s.settled)
        ada = s.rt.store.users.resolve("telegram:4242")
        s.telegram_post(s.telegram.make_update("/link"))
        s.wait(lambda: len(s.telegram.sent_messages(4242)) == 2)
        issued = s.telegram.sent_messages(4242)[1]["text"]
        code = issued.split("link code is ", 1)[1].split(" ", 1)[0].strip("<>/b.")
        post(s, chat, chat.event(f"/link {code}"))
        s.wait(lambda: chat.messages(DM))
        assert chat.texts(DM)[0].startswith("Linked googlechat:users/1001 with telegram:4242")
        s.wait(lambda: s.rt.store.users.resolve("googlechat:users/1001") == ada)


def test_the_google_chat_webhook_imports_no_heavy_sdk():
    import subprocess
    import sys

    code = ("import sys, functions.googlechat;"
            "print([m for m in ('litellm', 'mcp', 'modal', 'boto3', 'daytona', 'httpx', 'jwt')"
            " if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
