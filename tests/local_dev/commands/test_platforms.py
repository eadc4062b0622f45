"""`iris telegram …` against the fake Bot API, and `iris slack manifest`."""

import json

import pytest
import yaml
from click.testing import CliRunner

from core.config import load_settings
from core.platforms.telegram_inbound import UPDATE_TYPES
from core.store import open_store
from iris_testing.server import serve
from iris_testing.telegram_api import FakeTelegram
from local_dev.cli import cli

TOKEN = "7000001:cli-token"


@pytest.fixture
def telegram(monkeypatch):
    fake = FakeTelegram(token=TOKEN)
    with serve(fake.app) as server:
        monkeypatch.setenv("IRIS_TELEGRAM_TOKEN", TOKEN)
        monkeypatch.setenv("IRIS_TELEGRAM_API_BASE", server.url)
        yield fake


def test_set_webhook_generates_saves_and_registers_a_secret(telegram, iris_home, monkeypatch):
    result = CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example"])
    assert result.exit_code == 0, result.output
    webhook = telegram.webhook
    assert webhook["url"] == "https://iris.example/telegram/webhook"
    assert webhook["allowed_updates"] == list(UPDATE_TYPES)
    assert "callback_query" in webhook["allowed_updates"]  # clarify buttons
    secret = webhook["secret_token"]
    assert len(secret) >= 32
    assert f"IRIS_TELEGRAM_SECRET={secret}" in result.output
    assert "@iris_test_bot" in result.output

    monkeypatch.delenv("IRIS_TELEGRAM_SECRET", raising=False)
    assert load_settings().secret("telegram_secret") == secret  # read back from .env
    assert (iris_home / ".env").stat().st_mode & 0o777 == 0o600
    commands = {c["command"] for c in dict(telegram.calls)["setMyCommands"]["commands"]}
    assert {"new", "help", "stop", "usage", "model"} <= commands
    store = open_store(load_settings())
    try:  # the webhook reads the bot's @username from here instead of asking Telegram
        assert store.bots.get("telegram", "7000001")["username"] == "iris_test_bot"
    finally:
        store.close()

    again = CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example/hook/x"])
    assert again.exit_code == 0, again.output
    assert telegram.webhook["secret_token"] == secret
    assert telegram.webhook["url"] == "https://iris.example/hook/x"
    assert "already configured" in again.output


def test_set_webhook_with_an_unreachable_database_warns_and_succeeds(telegram, monkeypatch):
    monkeypatch.setenv("IRIS_DB_URL", "libsql://nowhere.invalid")
    monkeypatch.setenv("IRIS_DB_AUTH_TOKEN", "t")
    result = CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example"])
    assert result.exit_code == 0, result.output
    assert telegram.webhook["url"] == "https://iris.example/telegram/webhook"
    assert "Could not save @iris_test_bot in the database" in result.output


def test_set_webhook_refuses_bad_input_and_changes_nothing(telegram, iris_home, monkeypatch):
    plain = CliRunner().invoke(cli, ["telegram", "set-webhook", "http://iris.example"])
    assert plain.exit_code == 1 and "https://" in plain.output
    bad = CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example",
                                   "--secret", "has spaces!"])
    assert bad.exit_code == 1 and "--secret" in bad.output
    assert telegram.webhook is None and not (iris_home / ".env").exists()
    monkeypatch.delenv("IRIS_TELEGRAM_TOKEN")
    missing = CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example"])
    assert missing.exit_code == 2 and "IRIS_TELEGRAM_TOKEN" in missing.output


def test_info_and_delete(telegram):
    CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example"])
    info = CliRunner().invoke(cli, ["telegram", "info"])
    assert "url: https://iris.example/telegram/webhook" in info.output
    deleted = CliRunner().invoke(cli, ["telegram", "delete-webhook"])
    assert deleted.exit_code == 0 and telegram.webhook is None
    assert "(no webhook set)" in CliRunner().invoke(cli, ["telegram", "info"]).output


def test_telegram_errors_are_one_line(telegram):
    telegram.fail_next("setWebhook", error_code=401)
    result = CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example",
                                      "--secret", "abc"])
    assert result.exit_code == 1
    assert result.output.startswith("error: Telegram refused")


def test_slack_manifest(monkeypatch):
    result = CliRunner().invoke(cli, ["slack", "manifest", "--url", "https://iris.example/"])
    assert result.exit_code == 0, result.output
    document = yaml.safe_load(result.output)
    events = document["settings"]["event_subscriptions"]
    assert events["request_url"] == "https://iris.example/slack/events"
    assert {"app_mention", "message.im"} <= set(events["bot_events"])
    assert {"chat:write", "app_mentions:read", "im:history", "commands"} <= set(
        document["oauth_config"]["scopes"]["bot"])
    (command,) = document["features"]["slash_commands"]
    assert command["command"] == "/iris" and command["url"] == events["request_url"]

    monkeypatch.setenv("IRIS_PUBLIC_URL", "https://from-settings.example")
    as_json = json.loads(CliRunner().invoke(cli, ["slack", "manifest", "--json"]).output)
    assert as_json["settings"]["event_subscriptions"]["request_url"].startswith(
        "https://from-settings.example")
    refused = CliRunner().invoke(cli, ["slack", "manifest", "--url", "http://x"])
    assert refused.exit_code == 2
