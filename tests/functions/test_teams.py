"""Microsoft Teams through real HTTP: activities signed as the Bot Connector signs them (RS256
JWTs, keys from the fake's OpenID metadata and JWKS) → Iris → worker → Iris' sender
(client-credentials token, then the conversation's service URL) → the fake connector on loopback
(iris_testing/teams_api.py)."""

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.messages import Message
from functions import cron
from iris_testing.platform_stack import EchoModel, Stack, platform_stack
from iris_testing.server import serve
from iris_testing.teams_api import FakeTeams
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import make_job
from tests.functions.clarify_common import ASK, user_turns

ADA_CHAT = "a:1personal-ada"


@contextmanager
def teams_stack(home, **kwargs) -> Iterator[tuple[Stack, FakeTeams]]:
    teams = FakeTeams()
    with serve(teams.app) as server:
        teams.url = server.url
        env = {**teams.env(), **kwargs.pop("env", {})}
        with platform_stack(home, **kwargs, **env) as stack:
            yield stack, teams


@pytest.fixture
def both(iris_home):
    with teams_stack(iris_home) as running:
        yield running


def post(stack: Stack, activity, headers=None, **claims):
    body = activity if isinstance(activity, bytes) else json.dumps(activity).encode()
    teams = claims.pop("teams")
    sent = headers if headers is not None else teams.headers(**claims)
    return stack.http.post(f"{stack.url}/teams/messages", content=body, headers=sent)


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def test_a_message_is_answered_in_the_conversation_as_a_reply(both):
    stack, teams = both
    activity = teams.activity("say **hi**")
    assert post(stack, activity, teams=teams).status_code == 202
    stack.wait(lambda: teams.messages(ADA_CHAT))
    (sent,) = teams.messages(ADA_CHAT)
    assert sent["text"] == "re: say **hi**" and sent["textFormat"] == "markdown"
    assert sent["reply_to"] == activity["id"]
    assert stack.model.seen == ["say **hi**"]


def test_forged_expired_misaddressed_or_unsigned_activities_are_refused(both):
    stack, teams = both
    activity = teams.activity("hello")
    forger = FakeTeams()  # its own keys, unknown to Iris' key set
    forger.url = teams.url
    refusals = [
        post(stack, activity, teams=forger),
        post(stack, activity, teams=teams, now=NOW.timestamp()),  # long expired
        post(stack, activity, teams=teams, audience="another-bot"),
        post(stack, activity, teams=teams, issuer="https://sts.windows.net/evil/"),
        post(stack, activity, teams=teams, service_url="https://evil.example.net/"),
        post(stack, activity, teams=teams, kid="made-up"),
        post(stack, activity, headers={"Content-Type": "application/json"}, teams=teams),
        post(stack, activity, headers={"Authorization": "Bearer not.a.jwt"}, teams=teams),
    ]
    # an HMAC token keyed with the public key's bytes (the RS/HS confusion) and alg none
    import jwt

    claims = {"iss": "https://api.botframework.com", "aud": teams.app_id,
              "serviceurl": teams.service_url, "exp": 4102444800}
    hs = jwt.encode(claims, "the-public-key-as-an-hmac-secret!", algorithm="HS256")
    none = jwt.encode(claims, None, algorithm="none")
    for token in (hs, none):
        refusals.append(post(stack, activity, headers={"Authorization": f"Bearer {token}"},
                             teams=teams))
    assert [r.status_code for r in refusals] == [401] * len(refusals)
    assert all(r.json()["error"]["code"] == "bad_token" for r in refusals)
    assert count(stack) == 0 and count(stack, "users") == 0 and stack.model.seen == []


def test_keys_are_cached_and_a_new_key_is_fetched_at_most_every_five_minutes(iris_home):
    clock = ManualClock(NOW)
    with teams_stack(iris_home, clock=clock) as (stack, teams):
        def send(text, **claims):
            return post(stack, teams.activity(text), teams=teams, now=clock.now(), **claims)

        assert send("one").status_code == 202
        assert send("two").status_code == 202
        assert teams.key_fetches == 1  # cached
        for n in range(5):  # made-up key ids make no fetch of their own
            assert send("forged", kid=f"made-up-{n}").status_code == 401
        teams.rotate()
        clock.set(NOW + timedelta(seconds=299))
        assert send("three").status_code == 401 and teams.key_fetches == 1
        clock.set(NOW + timedelta(seconds=300))
        assert send("four").status_code == 202 and teams.key_fetches == 2
        clock.set(NOW + timedelta(days=2))  # past the TTL: fetched again for a known key
        assert send("five").status_code == 202 and teams.key_fetches == 3
        stack.wait(lambda: len(teams.messages(ADA_CHAT)) == 4)


def test_a_redelivered_activity_runs_one_turn_and_gets_one_reply(both):
    stack, teams = both
    activity = teams.activity("once")
    for _ in range(3):
        assert post(stack, activity, teams=teams).status_code == 202
    stack.wait(stack.settled)
    stack.wait(lambda: teams.messages(ADA_CHAT))
    assert stack.model.seen == ["once"]
    assert teams.texts(ADA_CHAT) == ["re: once"]


def test_a_long_answer_is_split_within_the_teams_limit(both):
    stack, teams = both
    paragraphs = [f"part {i} " + "word " * 2500 for i in range(3)]
    stack.model.before = lambda messages: Message(role="assistant",
                                                  content="\n\n".join(paragraphs))
    post(stack, teams.activity("a lot"), teams=teams)
    stack.wait(stack.settled)
    sent = teams.texts(ADA_CHAT)
    assert len(sent) >= 3 and all(len(text) <= 7000 for text in sent)
    assert " ".join(sent).split() == " ".join(paragraphs).split()


def test_a_stranger_gets_a_pairing_code_then_is_answered(iris_home):
    with teams_stack(iris_home, env={"IRIS_TEAMS_ACCESS": "pairing"}) as (s, teams):
        assert post(s, teams.activity("hi"), teams=teams).status_code == 202
        s.wait(lambda: teams.messages(ADA_CHAT))
        assert "pairing code" in teams.texts(ADA_CHAT)[0].lower()
        assert count(s) == 0 and s.model.seen == []
        code = teams.texts(ADA_CHAT)[0].split("pairing code is ", 1)[1].split(" ", 1)[0]
        from core.identity.pairing import Pairing

        Pairing(s.rt.store).approve(code.strip("*`."), by="cli:operator")
        post(s, teams.activity("hello again"), teams=teams)
        s.wait(lambda: "re: hello again" in teams.texts(ADA_CHAT))


def test_in_a_channel_the_mention_is_dropped_and_the_channel_owns_the_data(both):
    stack, teams = both
    channel = "19:general@thread.tacv2;messageid=1700000000001"
    post(stack, teams.activity("<at>Iris</at> what is 2+2?", conversation=channel,
                               kind="channel"), teams=teams)
    stack.wait(lambda: teams.messages(channel))
    assert teams.texts(channel) == ["re: [Ada] what is 2+2?"]
    scope = stack.rt.store.users.resolve(f"teams:group:{channel}")
    assert stack.rt.store.users.get(scope).kind == "group"


def test_slash_commands_work_in_teams(both):
    stack, teams = both
    post(stack, teams.activity("/help"), teams=teams)
    stack.wait(lambda: teams.messages(ADA_CHAT))
    assert "/memory" in teams.texts(ADA_CHAT)[0] and "/new" in teams.texts(ADA_CHAT)[0]
    assert stack.model.seen == []


def test_a_rate_limited_send_is_retried_not_doubled(both):
    stack, teams = both
    teams.rate_limit_next()
    post(stack, teams.activity("hello"), teams=teams)
    stack.wait(lambda: stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"))
    assert stack.rt.store.db.scalar("SELECT status FROM deliveries") == "pending"
    stack.rt.store.db.execute("UPDATE deliveries SET next_attempt_at = 0")
    asyncio.run(stack.rt.delivery.sweep())
    asyncio.run(stack.rt.delivery.sweep())
    assert teams.texts(ADA_CHAT) == ["re: hello"]


def test_a_question_is_answered_by_an_adaptive_card_button(scripted_llm, iris_home):
    llm, model = scripted_llm
    llm.tool_call("clarify", ASK)
    with teams_stack(iris_home, model=model) as (stack, teams):
        post(stack, teams.activity("order me a coffee"), teams=teams)
        stack.wait(lambda: teams.messages(ADA_CHAT) and stack.settled())
        question = teams.messages(ADA_CHAT)[0]
        (card,) = question["attachments"]
        assert card["contentType"] == "application/vnd.microsoft.card.adaptive"
        actions = card["content"]["actions"]
        assert [a["title"] for a in actions] == ["Small", "Large"]
        assert {a["type"] for a in actions} == {"Action.Submit"}
        llm.reply("A large one it is.")
        pressed = teams.press(actions[1]["data"])
        assert post(stack, pressed, teams=teams).status_code == 202
        assert post(stack, pressed, teams=teams).status_code == 202  # pressed twice
        stack.wait(lambda: len(teams.messages(ADA_CHAT)) == 2 and stack.settled())
        assert user_turns(llm)[-1] == '[answer to "Which size?"] 2. Large'
        assert user_turns(llm).count(user_turns(llm)[-1]) == 1
        assert teams.texts(ADA_CHAT)[1] == "A large one it is."


def test_a_cron_job_delivers_to_the_conversation(iris_home):
    clock = ManualClock(NOW)
    with teams_stack(iris_home, clock=clock) as (s, teams):
        post(s, teams.activity("hi"), teams=teams, now=NOW.timestamp())
        s.wait(lambda: teams.messages(ADA_CHAT))
        s.wait(s.settled)
        make_job(s.rt.store, s.rt.settings, schedule="every 1h", at=NOW,
                 account="teams:29:1ada", prompt="say hi", deliver="teams", name="greeter")
        clock.set(NOW + timedelta(hours=1))

        async def tick():
            await cron.tick(s.rt)
            await s.rt.dispatcher.idle()

        asyncio.run(tick())
        s.wait(lambda: len(teams.messages(ADA_CHAT)) == 2)
        message = teams.messages(ADA_CHAT)[1]
        assert message["text"].startswith("⏰ greeter") and message["reply_to"] is None


def test_link_joins_a_teams_account_to_a_telegram_one(iris_home):
    model = EchoModel()
    with teams_stack(iris_home, model=model, env={"IRIS_TEAMS_ACCESS": "pairing"}) as (
            s, teams):
        s.telegram_post(s.telegram.make_update("I'm Ada"))
        s.wait(lambda: s.telegram.sent_messages(4242))
        s.wait(s.settled)
        ada = s.rt.store.users.resolve("telegram:4242")
        s.telegram_post(s.telegram.make_update("/link"))
        s.wait(lambda: len(s.telegram.sent_messages(4242)) == 2)
        issued = s.telegram.sent_messages(4242)[1]["text"]
        code = issued.split("link code is ", 1)[1].split(" ", 1)[0].strip("<>/b.")
        post(s, teams.activity(f"/link {code}"), teams=teams)
        s.wait(lambda: teams.messages(ADA_CHAT))
        assert teams.texts(ADA_CHAT)[0].startswith("Linked teams:29:1ada with telegram:4242")
        s.wait(lambda: s.rt.store.users.resolve("teams:29:1ada") == ada)


def test_the_teams_webhook_imports_no_heavy_sdk():
    import subprocess
    import sys

    code = ("import sys, functions.teams;"
            "print([m for m in ('litellm', 'mcp', 'modal', 'boto3', 'daytona', 'httpx', 'jwt')"
            " if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
