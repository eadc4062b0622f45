"""The platform registry: one spec per platform decides trust, pushes, approvals, addresses."""

import pytest

from core.messages import InboundMessage
from core.platforms.registry import PLATFORMS
from core.platforms.spec import ChatAddress, Platforms, PlatformSpec


def test_flags_of_the_registered_platforms():
    assert [s.name for s in PLATFORMS if s.trusted] == ["http", "cli", "cron"]
    pushed = ("telegram", "slack", "whatsapp", "discord", "email", "teams", "googlechat",
              "line", "sms", "matrix")
    assert PLATFORMS.push_names() == pushed
    assert [s.name for s in PLATFORMS if s.interactive] == ["http", "cli", *pushed]
    assert [s.name for s in PLATFORMS if s.unattended] == ["cron"]
    assert PLATFORMS.webhooks() == ["functions.telegram", "functions.slack", "functions.whatsapp",
                                    "functions.discord", "functions.email_webhook",
                                    "functions.teams", "functions.googlechat",
                                    "functions.line", "functions.sms", "functions.matrix"]


def test_whatsapp_discord_and_email_chats_named_in_text():
    from core.errors import IrisUsageError

    whatsapp, discord, email = PLATFORMS["whatsapp"], PLATFORMS["discord"], PLATFORMS["email"]
    assert whatsapp.parse_chat("+4915112345678").chat_key == "whatsapp:4915112345678"
    assert discord.parse_chat("1187262000000000042").address["channel_id"] == (
        "1187262000000000042")
    found = email.parse_chat("Ada@Example.com")
    assert found.address["to"] == "ada@example.com"
    assert email.same_chat({"to": "ADA@example.com"}, found.address)
    for spec, bad in ((whatsapp, "ada"), (discord, "#general"), (email, "not-an-address")):
        with pytest.raises(IrisUsageError):
            spec.parse_chat(bad)


def test_line_chats_named_in_text():
    from core.errors import IrisUsageError

    line = PLATFORMS["line"]
    user = "U" + "4af4980629a1b2c3d4e5f60718293a4b"
    assert line.parse_chat(user).chat_key == f"line:{user}"
    assert line.parse_chat("C" + "0" * 32).address["chat_id"] == "C" + "0" * 32
    for bad in ("ada", "U123", "X" + "0" * 32):
        with pytest.raises(IrisUsageError):
            line.parse_chat(bad)


def test_sms_chats_named_in_text():
    from core.errors import IrisUsageError

    sms = PLATFORMS["sms"]
    assert sms.parse_chat("+15551234567").chat_key == "sms:+15551234567"
    for bad in ("15551234567", "+0123", "ada"):
        with pytest.raises(IrisUsageError):
            sms.parse_chat(bad)


def test_matrix_rooms_named_in_text():
    from core.errors import IrisUsageError

    matrix = PLATFORMS["matrix"]
    assert matrix.parse_chat("!abc:example.org").chat_key == "matrix:!abc:example.org"
    for bad in ("@ada:example.org", "abc", "!nohost"):
        with pytest.raises(IrisUsageError):
            matrix.parse_chat(bad)


def test_an_unknown_platform_gets_the_most_careful_spec():
    spec = PLATFORMS["carrier-pigeon"]
    assert not (spec.trusted or spec.push or spec.interactive or spec.unattended)
    assert "carrier-pigeon" not in PLATFORMS


def test_a_platform_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        Platforms([PlatformSpec(name="x"), PlatformSpec(name="x")])


def test_a_new_platform_needs_only_its_spec(settings):
    sent = object()
    pigeon = PlatformSpec(
        name="pigeon", push=True, sender=lambda s: sent,
        chat_address=lambda m: ChatAddress(m.chat_key, {"loft": m.chat_id}, f"loft {m.chat_id}"),
    )
    platforms = Platforms([*PLATFORMS, pigeon])
    assert platforms.push_names()[-1] == "pigeon"
    assert platforms.senders(settings) == {"pigeon": sent}  # telegram/slack not configured
    message = InboundMessage(platform="pigeon", chat_id="7", account="pigeon:7",
                             platform_message_id="1", text="coo", meta={"quote": 1})
    assert platforms["pigeon"].reply_address(message) == {"chat_id": "7", "thread_id": None,
                                                          "quote": 1}


def test_chats_named_in_text_are_parsed_by_their_platform():
    telegram, slack = PLATFORMS["telegram"], PLATFORMS["slack"]
    assert telegram.parse_chat("-100123:7") == ChatAddress(
        "telegram:-100123:7", {"chat_id": "-100123", "thread_id": "7"}, "telegram:-100123:7")
    found = slack.parse_chat("T1:C9:1700000000.000100")
    assert found.chat_key == "slack:T1:C9:1700000000.000100" and found.label == (
        "slack:C9:1700000000.000100")
    assert slack.same_chat(found.address, slack.parse_chat("C9:1700000000.000100").address)
    from core.errors import IrisUsageError

    with pytest.raises(IrisUsageError, match="not a Telegram chat"):
        telegram.parse_chat("@someone")


def test_teams_and_google_chat_chats_named_in_text():
    from core.errors import IrisUsageError

    teams, chat = PLATFORMS["teams"], PLATFORMS["googlechat"]
    found = teams.parse_chat("19:general@thread.tacv2")
    assert found.chat_key == "teams:19:general@thread.tacv2"
    assert found.address["conversation_id"] == "19:general@thread.tacv2"
    assert chat.parse_chat("spaces/AAAAx1b2c3d").address["space"] == "spaces/AAAAx1b2c3d"
    for spec, bad in ((teams, "a b"), (teams, "../x?y"), (chat, "AAAA"),
                      (chat, "spaces/a/messages/b")):
        with pytest.raises(IrisUsageError):
            spec.parse_chat(bad)
