"""The Slack endpoint through real HTTP: signed requests → Iris → worker →
slack_sdk's WebClient → the fake Slack Web API on loopback."""

import json
import threading
import time

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from core.clock import ManualClock
from iris_testing.platform_stack import platform_stack
from iris_testing.server import serve
from tests.clocks import NOW


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def posted(stack, channel=None):
    return [(p["text"], p.get("thread_ts")) for p in stack.slack.posted(channel)]


def dm(stack, text, **kwargs):
    kwargs.setdefault("channel", "D1")
    return stack.slack.event_payload(
        stack.slack.message_event(text, channel_type="im", **kwargs)
    )


def test_url_verification_is_answered(stack):
    response = stack.slack_post({"type": "url_verification", "challenge": "c-123", "token": "t"})
    assert response.status_code == 200 and response.json() == {"challenge": "c-123"}


def test_bad_or_stale_signatures_are_refused_and_store_nothing(stack):
    payload = dm(stack, "hello")
    assert stack.slack_post(payload, secret="not-the-secret").status_code == 401
    stale = int(time.time()) - 600
    assert stack.slack_post(payload, timestamp=stale).status_code == 401
    unsigned = stack.http.post(f"{stack.url}/slack/events", json=payload)
    assert unsigned.status_code == 401
    assert stack.rt.store.db.scalar("SELECT count(*) FROM inbox") == 0


def test_signature_age_is_judged_by_the_runtimes_clock(iris_home):
    """A request signed at the clock's time passes, one from six minutes before it is a
    replay, whatever the calendar says."""
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock) as s:
        payload = dm(s, "hello")
        assert s.slack_post(payload, timestamp=int(NOW.timestamp()) - 360).status_code == 401
        assert s.slack_post(payload, timestamp=int(NOW.timestamp())).status_code == 200
        clock.advance(360)
        retry = dm(s, "hello again", ts="1700000001.000200")
        assert s.slack_post(retry, timestamp=int(NOW.timestamp())).status_code == 401
        s.wait(s.settled)
        assert s.rt.store.db.scalar("SELECT count(*) FROM inbox") == 1


def test_unconfigured_slack_answers_404_and_503(iris_home):
    with platform_stack(iris_home, IRIS_SLACK_SIGNING_SECRET="", IRIS_SLACK_BOT_TOKEN="") as s:
        assert s.slack_post(dm(s, "hi")).status_code == 404
    with platform_stack(iris_home, IRIS_SLACK_BOT_TOKEN="") as s:
        response = s.slack_post(dm(s, "hi"))
        assert response.status_code == 503
        assert "IRIS_SLACK_BOT_TOKEN" in response.json()["error"]["message"]


def test_a_direct_message_is_answered_in_mrkdwn(stack):
    response = stack.slack_post(dm(stack, "make it **bold** &amp; clear"))
    assert response.status_code == 200
    stack.wait(lambda: stack.slack.posted())
    assert posted(stack) == [("re: make it *bold* &amp; clear", None)]
    assert stack.model.seen == ["make it **bold** & clear"]
    assert stack.slack.methods_called() == ["chat.postMessage"]  # no auth.test on the ack path


def test_a_mention_is_answered_in_its_thread_and_the_thread_is_its_own_chat(stack):
    slack = stack.slack
    mention = slack.app_mention_event("what's up?", channel="C9")
    stack.slack_post(slack.event_payload(mention))
    stack.wait(lambda: stack.slack.posted())
    assert posted(stack) == [("re: [<@U123>] what's up?", mention["ts"])]

    follow_up = slack.message_event("and then?", channel="C9", thread_ts=mention["ts"],
                                     user="U777")
    assert stack.slack_post(slack.event_payload(follow_up)).status_code == 200
    elsewhere = slack.message_event("unrelated chatter", channel="C9")
    stack.slack_post(slack.event_payload(elsewhere))
    stack.wait(lambda: len(stack.slack.posted()) == 2)
    stack.wait(stack.settled)
    assert posted(stack)[1] == ("re: [<@U777>] and then?", mention["ts"])
    assert stack.model.seen == ["[<@U123>] what's up?", "[<@U777>] and then?"]

    store = stack.rt.store
    scope = store.users.resolve("slack:group:T1:C9")
    chats = {r["chat_key"] for r in store.db.query("SELECT chat_key FROM inbox")}
    assert chats == {f"slack:T1:C9:{mention['ts']}"}
    assert store.users.get(scope).kind == "group"


def test_retries_and_the_double_event_of_a_mention_run_one_turn(stack):
    slack = stack.slack
    mention = slack.app_mention_event("only once", channel="C5")
    as_message = dict(mention, type="message", channel_type="channel")
    envelope = slack.event_payload(mention)
    assert stack.slack_post(envelope).status_code == 200
    assert stack.slack_post(envelope, retry=1).status_code == 200
    assert stack.slack_post(envelope, retry=2).status_code == 200
    assert stack.slack_post(slack.event_payload(as_message)).status_code == 200
    stack.wait(stack.settled)
    stack.wait(lambda: stack.slack.posted())
    assert stack.model.seen == ["[<@U123>] only once"]
    assert len(stack.slack.posted()) == 1


def test_the_bots_own_and_other_bots_messages_are_ignored(stack):
    slack = stack.slack
    own = slack.message_event("my own reply", user=slack.bot_user_id, channel="D1",
                              channel_type="im")
    other_bot = dict(slack.message_event("beep", channel="D1", channel_type="im"),
                     bot_id="B999")
    edited = dict(slack.message_event("x", channel="D1", channel_type="im"),
                  subtype="message_changed")
    for event in (own, other_bot, edited):
        assert stack.slack_post(slack.event_payload(event)).status_code == 200
    reaction = slack.event_payload({"type": "reaction_added", "user": "U1", "reaction": "x"})
    assert stack.slack_post(reaction).status_code == 200
    # A message posted after them is answered: by then the ignored ones would have been too.
    assert stack.slack_post(dm(stack, "after them")).status_code == 200
    stack.wait(lambda: stack.slack.posted(), "the answer to the later message")
    assert stack.rt.store.db.scalar("SELECT count(*) FROM inbox") == 1
    assert stack.model.seen == ["after them"]


def test_text_commands_in_messages_and_mentions(stack):
    stack.slack_post(dm(stack, " /help"))
    stack.slack_post(stack.slack.event_payload(
        stack.slack.app_mention_event("/usage", channel="C2")))
    stack.wait(lambda: len(stack.slack.posted()) == 2)
    replies = {p["channel"]: p["text"] for p in stack.slack.posted()}
    assert "/stop" in replies["D1"] and "/memory" in replies["D1"]
    assert "model calls" in replies["C2"]
    assert stack.model.seen == []


class ResponseUrl:
    """Receives what Iris posts to a slash command's response_url."""

    def __init__(self):
        self.received = []
        self.lock = threading.Lock()
        self.app = Starlette(routes=[Route("/respond", self.respond, methods=["POST"])])

    async def respond(self, request):
        with self.lock:
            self.received.append(json.loads(await request.body()))
        return PlainTextResponse("ok")


def test_the_iris_slash_command_answers_through_its_response_url(iris_home):
    # Due deliveries are retried every second, as the minute tick does: in the full suite a
    # response_url post once timed out with nothing received, and a failed send is only
    # retried by a sweep. Exactly two answers must still arrive.
    with platform_stack(iris_home, sweep_seconds=1) as stack:
        _answers_through_the_response_url(stack)


def _answers_through_the_response_url(stack):
    hook = ResponseUrl()
    with serve(hook.app) as server:
        url = f"{server.url}/respond"
        response = stack.slack_command("help", response_url=url, trigger="t1")
        assert response.status_code == 200
        # /help's turn is answered first: a /stop sent while it still runs would stop it
        stack.wait(lambda: len(hook.received) == 1, timeout=120)
        stack.wait(stack.settled, timeout=120)
        stack.slack_command("stop", response_url=url, trigger="t2")
        stack.slack_command("stop", response_url=url, trigger="t2")  # a re-sent request
        stack.wait(lambda: len(hook.received) == 2, timeout=120)
        stack.wait(stack.settled, timeout=120)
    assert len(hook.received) == 2
    help_answer, stop_answer = sorted(hook.received, key=lambda b: "Commands" not in b["text"])
    assert "/new" in help_answer["text"] and help_answer["response_type"] == "ephemeral"
    assert stop_answer["text"] == "Nothing is running right now."
    assert stack.slack.posted() == []
    assert stack.model.seen == []


def test_a_failed_post_is_retried_with_slacks_retry_after(stack):
    stack.slack.fail_next("chat.postMessage", status=429, retry_after=7)
    stack.slack_post(dm(stack, "hello"))
    stack.wait(lambda: stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"))
    row = stack.rt.store.db.one("SELECT status, next_attempt_at, created_at FROM deliveries")
    assert row["status"] == "pending"
    assert 6 <= row["next_attempt_at"] - row["created_at"] <= 9
    assert stack.slack.posted() == []


def test_a_message_over_the_limit_is_answered_and_not_recorded(iris_home):
    with platform_stack(iris_home, IRIS_MAX_MESSAGE_CHARS="100") as s:
        assert s.slack_post(dm(s, "x" * 150)).status_code == 200
        s.wait(lambda: s.slack.posted())
        assert "150 characters" in s.slack.posted()[0]["text"]
        assert s.rt.store.db.scalar("SELECT count(*) FROM inbox") == 0


def test_slacks_ssl_check_and_interactivity_payloads_are_acknowledged(stack):
    from urllib.parse import urlencode

    from iris_testing.platform_stack import SLACK_SECRET
    from iris_testing.slack_api import FakeSlack

    for form in ({"ssl_check": "1", "token": "x"}, {"payload": json.dumps({"type": "x"})}):
        body = urlencode(form).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded",
                   **FakeSlack.sign(body, SLACK_SECRET)}
        response = stack.http.post(f"{stack.url}/slack/events", content=body, headers=headers)
        assert response.status_code == 200
    assert stack.rt.store.db.scalar("SELECT count(*) FROM inbox") == 0
