"""Discord's interactions endpoint through real HTTP: interactions signed with Ed25519 → Iris →
worker → Iris' sender → the fake Discord REST API on loopback (iris_testing/discord_api.py)."""

import asyncio
import time
from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.platforms.discord import DiscordSender
from functions import cron
from iris_testing.discord_api import FakeDiscord
from iris_testing.platform_stack import EchoModel, platform_stack
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import make_job

DM = "1187262000000000042"


@pytest.fixture
def stack(iris_home):
    with platform_stack(iris_home) as running:
        yield running


def count(stack, table="inbox"):
    return stack.rt.store.db.scalar(f"SELECT count(*) FROM {table}")


def test_ping_is_answered_with_pong(stack):
    response = stack.discord_post(stack.discord.ping())
    assert (response.status_code, response.json()) == (200, {"type": 1})


def test_forged_stale_or_missing_signatures_are_refused_and_store_nothing(stack):
    interaction = stack.discord.interaction("ask", {"text": "hello"})
    assert stack.discord_post(interaction, signer=FakeDiscord()).status_code == 401
    assert stack.discord_post(interaction, timestamp=int(time.time()) - 600).status_code == 401
    unsigned = stack.http.post(f"{stack.url}/discord/interactions", json=interaction)
    assert unsigned.status_code == 401
    assert stack.discord_post(stack.discord.ping(), signer=FakeDiscord()).status_code == 401
    assert count(stack) == 0 and count(stack, "users") == 0


def test_ask_is_deferred_then_the_answer_edits_the_original_response(stack):
    response = stack.discord_post(stack.discord.interaction("ask", {"text": "say **hi**"}))
    assert response.json() == {"type": 5}
    stack.wait(lambda: stack.discord.messages(DM))
    (message,) = stack.discord.messages(DM)
    assert message["via"] == "original" and message["content"] == "re: say **hi**"
    assert stack.model.seen == ["say **hi**"]


def test_a_redelivered_interaction_runs_one_turn_and_gets_one_reply(stack):
    interaction = stack.discord.interaction("ask", {"text": "once"})
    for _ in range(3):
        assert stack.discord_post(interaction).status_code == 200
    stack.wait(stack.settled)
    stack.wait(lambda: stack.discord.messages(DM))
    assert stack.model.seen == ["once"]
    assert stack.discord.texts(DM) == ["re: once"]


def test_a_long_answer_edits_the_original_and_sends_follow_ups(stack):
    from core.messages import Message

    paragraphs = [f"part {i} " + "word " * 150 for i in range(6)]
    stack.model.before = lambda messages: Message(role="assistant",
                                                  content="\n\n".join(paragraphs))
    stack.discord_post(stack.discord.interaction("ask", {"text": "a lot"}))
    stack.wait(stack.settled)
    sent = stack.discord.messages(DM)
    assert [m["via"] for m in sent] == ["original"] + ["followup"] * (len(sent) - 1)
    assert len(sent) >= 3 and all(len(m["content"]) <= 2000 for m in sent)
    assert " ".join(m["content"] for m in sent).split() == " ".join(paragraphs).split()


def test_iris_slash_commands_are_discord_commands(stack):
    stack.discord_post(stack.discord.interaction("help", {}))
    stack.discord_post(stack.discord.interaction("usage", {}))
    stack.wait(lambda: len(stack.discord.messages(DM)) == 2)
    texts = stack.discord.texts(DM)
    assert any("/memory" in t and "/new" in t for t in texts)
    assert any("model calls" in t for t in texts)
    assert stack.model.seen == []


def test_a_stranger_gets_a_pairing_code_in_the_deferred_response(iris_home):
    with platform_stack(iris_home, IRIS_DISCORD_ACCESS="pairing") as s:
        assert s.discord_post(s.discord.interaction("ask", {"text": "hi"})).json() == {
            "type": 5}
        s.wait(lambda: s.discord.messages(DM))
        assert "pairing code" in s.discord.texts(DM)[0].lower()
        assert count(s) == 0 and s.model.seen == []
        in_server = s.discord_post(s.discord.interaction("ask", {"text": "hi"}, guild=True))
        assert in_server.json()["type"] == 4 and in_server.json()["data"]["flags"] == 64
        code = s.discord.texts(DM)[0].split("pairing code is ", 1)[1].split(" ", 1)[0]
        from core.identity.pairing import Pairing

        Pairing(s.rt.store).approve(code, by="cli:operator")
        s.discord_post(s.discord.interaction("ask", {"text": "hello again"}))
        s.wait(lambda: "re: hello again" in s.discord.texts(DM))


def test_in_a_server_channel_the_channel_owns_the_data(stack):
    channel = "1187262000000000777"
    stack.discord_post(stack.discord.interaction("ask", {"text": "what is 2+2?"}, guild=True,
                                                 channel_id=channel))
    stack.wait(lambda: stack.discord.messages(channel))
    assert stack.discord.texts(channel) == ["re: [Ada] what is 2+2?"]
    scope = stack.rt.store.users.resolve(f"discord:group:1187261900000000001:{channel}")
    assert stack.rt.store.users.get(scope).kind == "group"


def test_an_expired_interaction_token_falls_back_to_the_bots_channel_message(stack):
    interaction = stack.discord.interaction("ask", {"text": "late"})
    stack.discord.expire(interaction["token"])
    stack.discord_post(interaction)
    stack.wait(lambda: stack.discord.messages(DM))
    (message,) = stack.discord.messages(DM)
    assert message["via"] == "channel" and message["content"] == "re: late"


def test_a_rate_limited_send_is_retried_with_discords_retry_after(stack):
    stack.discord.rate_limit_next()
    stack.discord_post(stack.discord.interaction("ask", {"text": "hello"}))
    stack.wait(lambda: stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE last_error IS NOT NULL AND claimed_by IS NULL"))
    row = stack.rt.store.db.one("SELECT status, next_attempt_at, created_at FROM deliveries")
    assert row["status"] == "pending" and row["next_attempt_at"] - row["created_at"] < 2
    stack.rt.store.db.execute("UPDATE deliveries SET next_attempt_at = 0")
    asyncio.run(stack.rt.delivery.sweep())
    assert stack.discord.texts(DM) == ["re: hello"]


def test_a_cron_job_delivers_to_the_channel_through_the_bot(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock) as s:
        s.discord_post(s.discord.interaction("ask", {"text": "hi"}), timestamp=int(
            NOW.timestamp()))
        s.wait(lambda: s.discord.messages(DM))
        s.wait(s.settled)
        job = make_job(s.rt.store, s.rt.settings, schedule="every 1h", at=NOW,
                       account="discord:80351110224678912", prompt="say hi",
                       deliver="discord", name="greeter")
        clock.set(NOW + timedelta(hours=1))

        async def tick():
            await cron.tick(s.rt)
            await s.rt.dispatcher.idle()

        asyncio.run(tick())
        s.wait(lambda: len(s.discord.messages(DM)) == 2)
        message = s.discord.messages(DM)[1]
        assert message["via"] == "channel" and message["content"].startswith("⏰ greeter")
        assert job.name == "greeter"


def test_register_commands_puts_ask_and_every_iris_command(stack):
    from local_dev.commands.discord import application_commands

    sender = stack.rt.senders["discord"]
    assert isinstance(sender, DiscordSender)
    registered = asyncio.run(sender.register_commands(application_commands()))
    names = {c["name"] for c in registered}
    assert {"ask", "new", "help", "memory", "link", "stop", "approve"} <= names
    ask = next(c for c in stack.discord.commands if c["name"] == "ask")
    assert ask["options"][0]["name"] == "text" and ask["options"][0]["required"] is True


def test_echo_model_is_used(stack):
    assert isinstance(stack.model, EchoModel)


def test_every_api_call_carries_discords_bot_user_agent(stack):
    """Discord's API reference: ``User-Agent: DiscordBot ($url, $versionNumber)`` on every
    call: the interaction's response edit, the bot's channel message, the commands' PUT."""
    import re

    from local_dev.commands.discord import application_commands

    stack.discord_post(stack.discord.interaction("ask", {"text": "hello"}))
    stack.wait(lambda: stack.discord.texts(DM) == ["re: hello"] and stack.settled())
    late = stack.discord.interaction("ask", {"text": "late"})
    stack.discord.expire(late["token"])
    stack.discord_post(late)
    stack.wait(lambda: len(stack.discord.messages(DM)) == 2)
    asyncio.run(stack.rt.senders["discord"].register_commands(application_commands()))
    calls = stack.discord.requests
    assert {(m, p.split("/")[3]) for m, p, _ in calls} >= {
        ("PATCH", "webhooks"), ("POST", "channels"), ("PUT", "applications")}
    agents = {h.get("user-agent") for _, _, h in calls}
    assert len(agents) == 1
    assert re.fullmatch(r"DiscordBot \(https://\S+, \d+\.\d+\.\d+\)", agents.pop() or "")
