"""The Telegram webhook through real HTTP: uvicorn → Iris → worker → python-telegram-bot's Bot →
the fake Bot API on loopback."""

import asyncio
import json
import subprocess
import sys

import pytest

from core.clock import ManualClock
from core.messages import Message, ToolCall
from core.platforms.delivery import backoff
from iris_testing.platform_stack import TELEGRAM_SECRET, EchoModel, platform_stack
from iris_testing.waiting import until
from tests.clocks import NOW


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def texts(stack, chat_id=None):
    return [m["text"] for m in stack.telegram.sent_messages(chat_id)]


def test_a_private_message_is_answered_formatted(stack):
    response = stack.telegram_post(stack.telegram.make_update("say **hi**"))
    assert response.status_code == 200 and response.json()["status"] == "recorded"
    stack.wait(lambda: stack.telegram.sent_messages(4242))
    (sent,) = stack.telegram.sent_messages(4242)
    assert sent["text"] == "re: say <b>hi</b>" and sent["parse_mode"] == "HTML"
    user = stack.rt.store.users.resolve("telegram:4242")
    entry = stack.rt.store.inbox.find(user, "telegram", "4242:1")
    assert entry.status == "done" and entry.message.display_name == "Ada"


def test_wrong_or_missing_secret_is_refused_and_nothing_is_stored(stack):
    update = stack.telegram.make_update("hello")
    assert stack.telegram_post(update, secret="wrong").status_code == 403
    assert stack.telegram_post(update, secret=None).status_code == 403
    assert stack.telegram_post(update, secret=TELEGRAM_SECRET + "x").status_code == 403
    assert stack.rt.store.db.scalar("SELECT count(*) FROM inbox") == 0
    assert stack.model.seen == []


def test_unconfigured_telegram_answers_404_and_503(iris_home):
    with platform_stack(iris_home, IRIS_TELEGRAM_TOKEN="", IRIS_TELEGRAM_SECRET="") as s:
        response = s.telegram_post(s.telegram.make_update("hi"))
        assert response.status_code == 404
        assert "IRIS_TELEGRAM_TOKEN" in response.json()["error"]["message"]
    with platform_stack(iris_home, IRIS_TELEGRAM_SECRET="") as s:
        response = s.telegram_post(s.telegram.make_update("hi"))
        assert response.status_code == 503
        assert "set-webhook" in response.json()["error"]["message"]


def test_a_redelivered_update_runs_one_turn_and_gets_one_reply(stack):
    update = stack.telegram.make_update("once please")
    for _ in range(3):
        assert stack.telegram_post(update).status_code == 200
    stack.wait(stack.settled)
    stack.wait(lambda: stack.telegram.sent_messages())
    assert stack.model.seen == ["once please"]
    assert texts(stack) == ["re: once please"]


def test_updates_iris_does_not_act_on_are_acknowledged(stack):
    edited = {"update_id": 5, "edited_message": stack.telegram.make_update("x")["message"]}
    assert stack.telegram_post(edited).json()["status"] == "ignored"
    sticker = stack.telegram.make_update(None, chat_type="supergroup")
    sticker["message"]["sticker"] = {"file_id": "s"}
    assert stack.telegram_post(sticker).json()["status"] == "ignored"
    assert stack.rt.store.db.scalar("SELECT count(*) FROM inbox") == 0


def test_a_video_without_text_gets_a_plain_answer_without_a_turn(stack):
    update = stack.telegram.make_update(None)
    update["message"]["video"] = {"file_id": "v1", "file_unique_id": "u", "width": 1,
                                  "height": 1, "duration": 3}
    assert stack.telegram_post(update).json()["status"] == "answered"
    stack.wait(lambda: stack.telegram.sent_messages(4242))
    assert "not stickers or videos" in texts(stack, 4242)[0]
    assert stack.model.seen == []


def test_in_groups_iris_answers_mentions_replies_and_commands_only(stack):
    tg = stack.telegram
    group = -1001000000001
    # `iris telegram set-webhook` stored the bot's identity
    stack.rt.store.bots.put("telegram", "7000001", {"id": 7000001, "username": "iris_test_bot"})
    ignored = tg.make_update("just chatting", chat_type="supergroup")
    assert stack.telegram_post(ignored).json()["status"] == "ignored"
    mention = tg.make_update("@iris_test_bot what is 2+2?", chat_type="supergroup",
                             entities=[{"type": "mention", "offset": 0, "length": 14}])
    assert stack.telegram_post(mention).json()["status"] == "recorded"
    stack.wait(lambda: len(texts(stack, group)) == 1)
    bot_message_id = int(stack.telegram.sent_messages(group)[0]["reply_parameters"]
                         ["message_id"])
    assert bot_message_id == mention["message"]["message_id"]  # the answer quotes the question
    reply = tg.make_update("and 3+3?", chat_type="supergroup", user_id=77, first_name="Bo",
                           reply_to={"message_id": 999, "from": tg.bot_user,
                                     "chat": {"id": group, "type": "supergroup"}, "date": 1})
    assert stack.telegram_post(reply).json()["status"] == "recorded"
    other_bot = tg.make_update("/help@someone_else_bot", chat_type="supergroup")
    assert stack.telegram_post(other_bot).json()["status"] == "ignored"
    stack.wait(lambda: len(texts(stack, group)) == 2)
    assert texts(stack, group) == ["re: [Ada] what is 2+2?", "re: [Bo] and 3+3?"]

    store = stack.rt.store
    scope = store.users.resolve(f"telegram:group:{group}")
    assert store.users.get(scope).kind == "group"
    entries = store.db.query("SELECT user_id, account FROM inbox ORDER BY id")
    assert [(e["user_id"], e["account"]) for e in entries] == [
        (scope, "telegram:4242"), (scope, "telegram:77")]
    person = store.users.resolve("telegram:4242")
    assert store.sessions.list(person) == []  # the group's turns are not in Ada's own scope


def test_the_bots_username_is_never_fetched_while_telegram_waits(stack):
    """Unknown @username: the ack decides without it and never calls getMe; getMe runs after
    the ack, its answer is stored, and the next mention is recognised."""
    tg = stack.telegram
    group = -1001000000001

    def mention(text):
        return tg.make_update(f"@iris_test_bot {text}", chat_type="supergroup",
                              entities=[{"type": "mention", "offset": 0, "length": 14}])

    calls_before = len(tg.methods_called())
    first = stack.telegram_post(mention("are you there?"))
    assert first.json()["status"] == "ignored"  # not known yet as a mention of Iris
    stack.wait(lambda: stack.rt.store.bots.get("telegram", "7000001") is not None)
    assert tg.methods_called()[calls_before:] == ["getMe"]  # after the ack, once
    assert stack.rt.store.bots.get("telegram", "7000001")["username"] == "iris_test_bot"
    assert stack.telegram_post(mention("now?")).json()["status"] == "recorded"
    stack.wait(lambda: texts(stack, group) == ["re: [Ada] now?"])


def test_group_reply_mode_all_answers_every_message(iris_home):
    with platform_stack(iris_home, IRIS_GROUP_REPLY_MODE="all") as s:
        s.telegram_post(s.telegram.make_update("hello group", chat_type="supergroup"))
        s.wait(lambda: s.telegram.sent_messages())
        assert texts(s) == ["re: [Ada] hello group"]


def test_commands_run_without_a_model_call(stack):
    stack.telegram_post(stack.telegram.make_update("/help"))
    stack.telegram_post(stack.telegram.make_update("/nonsense"))
    stack.wait(lambda: len(texts(stack)) == 2)
    help_text, unknown = texts(stack)
    for name in ("/new", "/help", "/memory", "/skills", "/usage", "/model", "/link",
                 "/approve", "/stop"):
        assert name in help_text, name
    assert "Unknown command /nonsense" in unknown and "/help" in unknown
    assert stack.model.seen == []


def test_long_replies_are_split_on_paragraphs(stack):
    paragraphs = [f"Paragraph {i}: " + " ".join(["word"] * 150) for i in range(12)]
    long_text = "\n\n".join(paragraphs)

    async def answer(messages):
        return Message(role="assistant", content=long_text)

    stack.model.before = answer
    stack.telegram_post(stack.telegram.make_update("write a lot"))
    stack.wait(stack.settled)
    parts = texts(stack, 4242)
    assert len(parts) == 3 and all(len(p) <= 4096 for p in parts)
    assert all(p.startswith("Paragraph ") and p.endswith("word") for p in parts)
    assert "\n\n".join(parts) == long_text
    delivery = stack.rt.store.db.one("SELECT status, platform_ids FROM deliveries")
    assert delivery["status"] == "sent" and len(json.loads(delivery["platform_ids"])) == 3


def test_refused_formatting_falls_back_to_plain_text(stack):
    stack.telegram.reject_markdown = True
    stack.telegram_post(stack.telegram.make_update("**bold** claim"))
    stack.wait(stack.settled)
    (sent,) = stack.telegram.sent_messages(4242)
    assert sent["text"] == "re: **bold** claim" and "parse_mode" not in sent


def test_a_failed_send_is_retried_and_sent_once(iris_home):
    with platform_stack(iris_home, clock=ManualClock(NOW)) as stack:
        failed_send_is_retried_and_sent_once(stack)


def failed_send_is_retried_and_sent_once(stack):
    stack.telegram.fail_next("sendMessage", times=1, error_code=502)
    stack.telegram_post(stack.telegram.make_update("are you there"))
    stack.wait(lambda: stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE status = 'pending' AND last_error IS NOT NULL"
        " AND claimed_by IS NULL"))
    assert texts(stack, 4242) == []
    from functions.sweeper import sweep

    asyncio.run(sweep(stack.rt))  # still backing off
    assert texts(stack, 4242) == []
    stack.rt.store.clock.advance(backoff(1))
    asyncio.run(sweep(stack.rt))
    asyncio.run(sweep(stack.rt))
    assert texts(stack, 4242) == ["re: are you there"]
    assert stack.rt.store.db.scalar("SELECT status FROM deliveries") == "sent"


def test_typing_is_shown_while_the_turn_runs(stack):
    async def slow(messages):
        # the turn runs until the indicator is on
        await until(lambda: "sendChatAction" in stack.telegram.methods_called(),
                    "the typing indicator", seen=stack.telegram.methods_called)

    stack.model.before = slow
    stack.telegram_post(stack.telegram.make_update("think hard"))
    stack.wait(lambda: stack.telegram.sent_messages(4242))
    methods = stack.telegram.methods_called()
    assert methods.index("sendChatAction") < methods.index("sendMessage")
    action = dict(stack.telegram.calls)["sendChatAction"]
    assert action == {"chat_id": 4242, "action": "typing"}


def test_stop_cancels_the_running_turn_across_the_lease(stack):
    store = stack.rt.store
    calls = []

    async def tool_then_wait(messages):
        calls.append(len(messages))
        user = store.users.resolve("telegram:4242")
        await until(lambda: store.db.scalar(
            "SELECT count(*) FROM turn_cancels WHERE user_id = ?", (user,)), "the /stop")
        return Message(role="assistant", content="",
                       tool_calls=(ToolCall(id="c1", name="clock", arguments="{}"),))

    stack.model.before = tool_then_wait
    stack.telegram_post(stack.telegram.make_update("count to a million"))
    stack.wait(lambda: calls)
    response = stack.telegram_post(stack.telegram.make_update("/stop"))
    assert response.json()["status"] == "recorded"
    stack.wait(stack.settled)
    stack.wait(lambda: texts(stack, 4242))
    assert texts(stack, 4242) == ["Stopping: I'll end the current turn after the step it is on."]
    assert len(calls) == 1  # no model call after the stop

    user = store.users.resolve("telegram:4242")
    entries = store.db.query("SELECT status, reply FROM inbox WHERE user_id = ? ORDER BY id",
                             (user,))
    assert [e["status"] for e in entries] == ["cancelled", "done"]
    session = store.sessions.list(user)[0]
    kept = [m.message.role for m in store.messages.for_session(user, session.id)]
    assert kept == ["user", "assistant", "tool", "assistant"]  # nothing of the turn is lost


def test_stop_with_nothing_running_says_so(stack):
    stack.telegram_post(stack.telegram.make_update("/stop"))
    stack.wait(lambda: texts(stack, 4242))
    assert texts(stack, 4242) == ["Nothing is running right now."]


def test_an_unknown_user_in_pairing_mode_gets_only_a_code(iris_home):
    with platform_stack(iris_home, IRIS_TELEGRAM_ACCESS="pairing") as s:
        assert s.telegram_post(s.telegram.make_update("hello?")).json()["status"] == "denied"
        s.wait(lambda: s.telegram.sent_messages(4242))
        (answer,) = texts(s, 4242)
        assert "pairing code" in answer.lower()
        assert s.rt.store.db.scalar("SELECT count(*) FROM inbox") == 0
        assert s.model.seen == []


def test_the_webhook_module_imports_no_heavy_sdk():
    code = ("import sys, functions.telegram, functions.slack, functions.webhooks;"
            "print([m for m in ('litellm', 'mcp', 'modal', 'telegram', 'boto3', 'daytona')"
            " if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_echo_model_is_used(stack):
    assert isinstance(stack.model, EchoModel)
