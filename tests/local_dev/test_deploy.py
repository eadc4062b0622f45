"""``iris deploy`` with ``modal`` replaced by a fake executable on PATH (it records its
arguments), S3 through moto, Telegram through python-telegram-bot against the fake Bot API.
Two things cannot run here and are stood in for, through the command's injection points:
Modal's secret lookup (network) and opening a remote libSQL database (no server installs)."""

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.dotenv import read_dotenv
from infra.deploy import SecretState
from iris_testing.server import serve
from iris_testing.telegram_api import FakeTelegram
from local_dev.cli import cli
from tests.local_dev.fake_modal_cli import calls, install

pytestmark = pytest.mark.process  # its tools run shells or processes

ROOT = Path(__file__).resolve().parents[2]
WEB = "https://acme--iris-web-app.modal.run"
TOKEN = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi"


class Probe:
    def __init__(self, state=SecretState(exists=False)):
        self.state = state
        self.asked = []

    def __call__(self, name, keys):
        self.asked.append((name, list(keys)))
        return self.state


class Database:
    def __init__(self):
        self.opened = []

    def __call__(self, settings):
        self.opened.append(settings.db_url)


def guard_env(monkeypatch, *names):
    """Undo, after the test, variables that load_settings() copies from .env."""
    for name in names:
        monkeypatch.setenv(name, "placeholder")
        monkeypatch.delenv(name)


@pytest.fixture
def modal_log(tmp_path, monkeypatch):
    install(tmp_path / "bin")
    log = tmp_path / "modal-calls.jsonl"
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_MODAL_LOG", str(log))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MODAL_TOKEN_ID", "ak-test")
    monkeypatch.setenv("MODAL_TOKEN_SECRET", "as-test")
    monkeypatch.delenv("MODAL_PROFILE", raising=False)
    monkeypatch.delenv("MODAL_CONFIG_PATH", raising=False)
    return log


def setup_args(moto_s3, bucket, **overrides):
    values = {
        "--model": "anthropic/claude-sonnet-4-5",
        "--db": "libsql://iris-acme.turso.io",
        "--db-auth-token": "turso-token",
        "--objects": f"s3://{bucket}/iris",
        "--s3-endpoint-url": moto_s3.endpoint_url,
        "--s3-region": "us-east-1",
        "--aws-access-key-id": "iris-test-key",
        "--aws-secret-access-key": "iris-test-secret",
        "--sandbox": "modal",
        "--api-key": "iris-api-key",
        **overrides,
    }
    args = ["setup", "--non-interactive", "--no-doctor"]
    for flag, value in values.items():
        if value is not None:
            args += [flag, value]
    return args


@pytest.fixture
def configure(moto_s3, s3_bucket, modal_log, iris_home, monkeypatch):
    guard_env(monkeypatch, "ANTHROPIC_API_KEY")

    def write(model_key="sk-ant-test", **overrides):
        result = CliRunner().invoke(cli, setup_args(moto_s3, s3_bucket, **overrides))
        assert result.exit_code == 0, result.output
        if model_key:
            with (iris_home / ".env").open("a") as env:
                env.write(f"ANTHROPIC_API_KEY={model_key}\n")
    return write


def deploy(*args, probe=None, database=None):
    obj = {"secret_probe": probe or Probe(), "open_database": database or Database()}
    return CliRunner().invoke(cli, ["deploy", *args], obj=obj)


def test_deploy_creates_the_secret_deploys_and_prints_the_urls(configure, modal_log, iris_home):
    configure()
    probe, database = Probe(), Database()
    result = deploy(probe=probe, database=database)
    assert result.exit_code == 0, result.output

    assert database.opened == ["libsql://iris-acme.turso.io"]
    (name, keys), = probe.asked
    assert name == "iris"
    assert set(keys) >= {"IRIS_MODEL", "IRIS_DB_URL", "IRIS_OBJECTS_URL", "IRIS_DB_AUTH_TOKEN",
                         "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}

    create, run = calls(modal_log)
    assert create["argv"][:3] == ["secret", "create", "iris"] and "--force" not in create["argv"]
    assert create["secret_mode"] == "0o600"
    secret = create["secret"]
    assert secret["IRIS_MODEL"] == "anthropic/claude-sonnet-4-5"
    assert secret["IRIS_DB_AUTH_TOKEN"] == "turso-token"
    assert secret["ANTHROPIC_API_KEY"] == "sk-ant-test"
    assert secret["AWS_SECRET_ACCESS_KEY"] == "iris-test-secret"
    assert secret["IRIS_SANDBOX_BACKEND"] == "modal"
    assert not {"IRIS_HOME", "IRIS_DISPATCHER", "IRIS_CONFIG_PATH", "IRIS_SKILLS_DIR"} & set(secret)
    assert "turso-token" not in " ".join(create["argv"])

    assert run["argv"][:2] == ["deploy", str(ROOT / "infra" / "modal_app.py")]
    assert run["env"]["IRIS_MODAL_APP"] == "iris"
    assert run["env"]["IRIS_SANDBOX_MODAL_APP"] == "iris-sandboxes"

    assert f"Telegram webhook:  {WEB}/telegram/webhook" in result.output
    assert f"HTTP API:          {WEB}/v1/chat/completions" in result.output
    assert f"Slack events:      {WEB}/slack/events" in result.output
    assert "modal app logs iris" in result.output
    assert json.loads((iris_home / "deploy.json").read_text())["url"] == WEB


def test_an_existing_secret_is_kept_unless_pushed(configure, modal_log):
    configure()
    result = deploy(probe=Probe(SecretState(exists=True)))
    assert result.exit_code == 0, result.output
    assert [c["argv"][0] for c in calls(modal_log)] == ["deploy"]

    result = deploy("--push-secret", "--tag", "v1.2", probe=Probe(SecretState(exists=True)))
    assert result.exit_code == 0, result.output
    push, run = calls(modal_log)[1:]
    assert push["argv"][:3] == ["secret", "create", "iris"] and "--force" in push["argv"]
    assert run["argv"][-2:] == ["--tag", "v1.2"]


PROBLEMS = [
    ("no_token", {}, "modal token", "modal token new"),
    ("file_db", {"--db": "/tmp/iris-local.db"}, "db_url", "libsql://"),
    ("no_db_token", {"--db-auth-token": None}, "db_auth_token", "turso db tokens create"),
    ("local_objects", {"--objects": "/tmp/iris-objects"}, "objects_url", "s3://"),
    ("no_model", {"--model": None}, "model", "anthropic/claude-sonnet-4-5"),
    ("no_model_key", {}, "model key", "ANTHROPIC_API_KEY"),
    ("no_aws_keys", {"--aws-access-key-id": None, "--aws-secret-access-key": None},
     "s3 credentials", "AWS_ACCESS_KEY_ID"),
    ("local_sandbox", {"--sandbox": "local"}, "sandbox_backend", "modal"),
]


@pytest.mark.parametrize(("case", "overrides", "check", "fix"), PROBLEMS,
                         ids=[p[0] for p in PROBLEMS])
def test_each_missing_piece_is_named_and_nothing_is_deployed(
    case, overrides, check, fix, configure, modal_log, monkeypatch
):
    configure(model_key=None if case == "no_model_key" else "sk-ant-test", **overrides)
    if case == "no_token":
        monkeypatch.delenv("MODAL_TOKEN_ID")
    if case == "no_model_key":
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-only-in-my-shell")
    result = deploy()
    assert result.exit_code == 1
    assert f"✗ {check}:" in result.output
    assert fix in result.output.split(f"✗ {check}:")[1]
    assert "nothing was deployed" in result.output
    assert calls(modal_log) == []


def test_unreachable_database_and_bucket_are_errors(configure, modal_log, moto_s3):
    configure(**{"--objects": "s3://no-such-bucket-for-iris/x"})
    result = CliRunner().invoke(cli, ["deploy"], obj={"secret_probe": Probe()}, env={
        "IRIS_DB_URL": "libsql://127.0.0.1:1"})
    assert result.exit_code == 1
    assert "✗ database: cannot open libsql://127.0.0.1:1" in result.output
    assert "✗ object store: cannot use s3://no-such-bucket-for-iris/x" in result.output
    assert calls(modal_log) == []


def test_the_secret_lacking_keys_or_unreadable_stops_the_deploy(configure, modal_log):
    configure()
    result = deploy(probe=Probe(SecretState(exists=True, missing_keys=("IRIS_DB_AUTH_TOKEN",))))
    assert result.exit_code == 1
    assert "lacks IRIS_DB_AUTH_TOKEN" in result.output and "--push-secret" in result.output
    result = deploy(probe=Probe(SecretState(exists=False, error="Modal rejected the token")))
    assert result.exit_code == 1
    assert "cannot check the Modal secret 'iris': Modal rejected the token" in result.output
    assert calls(modal_log) == []


def test_every_problem_is_named_in_one_run(configure, modal_log, monkeypatch):
    configure(**{"--db": "/tmp/x.db", "--objects": "/tmp/objects", "--sandbox": "local"})
    monkeypatch.delenv("MODAL_TOKEN_SECRET")
    result = deploy("--telegram", "--slack")
    for check in ("modal token", "db_url", "objects_url", "sandbox_backend", "telegram", "slack"):
        assert f"✗ {check}:" in result.output
    assert "6 problem(s)" in result.output


def test_a_failing_modal_deploy_is_an_error(configure, modal_log, monkeypatch, iris_home):
    configure()
    monkeypatch.setenv("FAKE_MODAL_FAIL", "deploy")
    result = deploy(probe=Probe(SecretState(exists=True)))
    assert result.exit_code == 1
    assert "`modal deploy` failed (exit 1)" in result.output
    assert not (iris_home / "deploy.json").exists()


def test_check_only_runs_no_modal_command(configure, modal_log):
    configure()
    result = deploy("--check")
    assert result.exit_code == 0 and "All checks passed." in result.output
    assert calls(modal_log) == []


@pytest.fixture
def telegram(monkeypatch):
    fake = FakeTelegram()
    with serve(fake.app) as server:
        monkeypatch.setenv("IRIS_TELEGRAM_API_BASE", server.url)
        yield fake


def test_telegram_webhook_is_registered_with_a_generated_secret(
    configure, modal_log, telegram, iris_home
):
    configure(**{"--telegram-token": TOKEN})
    secret = read_dotenv(iris_home / ".env")["IRIS_TELEGRAM_SECRET"]
    result = deploy("--telegram")
    assert result.exit_code == 0, result.output
    assert telegram.webhook["url"] == f"{WEB}/telegram/webhook"
    assert telegram.webhook["secret_token"] == secret
    assert calls(modal_log)[0]["secret"]["IRIS_TELEGRAM_SECRET"] == secret
    expected = f"Telegram will send @iris_test_bot's messages to {WEB}/telegram/webhook"
    assert expected in result.output
    assert telegram.webhook["allowed_updates"] == ["message", "callback_query"]
    assert "setMyCommands" in telegram.methods_called()


def test_deploy_generates_a_missing_telegram_secret_and_needs_a_push(
    configure, modal_log, telegram, iris_home
):
    configure(**{"--telegram-token": TOKEN})
    env_file = iris_home / ".env"
    env_file.write_text("".join(line + "\n" for line in env_file.read_text().splitlines()
                                if not line.startswith("IRIS_TELEGRAM_SECRET=")))
    result = deploy("--telegram", probe=Probe(SecretState(exists=True)))
    assert result.exit_code == 1
    assert "predates the Telegram webhook secret" in result.output
    generated = read_dotenv(env_file)["IRIS_TELEGRAM_SECRET"]

    result = deploy("--telegram", "--push-secret", probe=Probe(SecretState(exists=True)))
    assert result.exit_code == 0, result.output
    assert calls(modal_log)[0]["secret"]["IRIS_TELEGRAM_SECRET"] == generated
    assert telegram.webhook["secret_token"] == generated


def test_webhooks_for_an_existing_deployment(configure, modal_log, telegram):
    configure(**{"--telegram-token": TOKEN})
    assert deploy().exit_code == 0
    before = len(calls(modal_log))
    result = deploy("--telegram", "--slack", "--skip-deploy")
    assert result.exit_code == 0, result.output
    assert len(calls(modal_log)) == before
    assert telegram.webhook["url"] == f"{WEB}/telegram/webhook"
    assert f"request_url: {WEB}/slack/events" in result.output
    assert "/iris" in result.output and "chat:write" in result.output

    other = "https://acme-dev--iris-web-app.modal.run"
    assert deploy("--telegram", "--skip-deploy", "--url", other).exit_code == 0
    assert telegram.webhook["url"] == f"{other}/telegram/webhook"


def test_a_telegram_refusal_is_reported(configure, modal_log, telegram):
    configure(**{"--telegram-token": TOKEN})
    telegram.fail_next("setWebhook", 401)
    result = deploy("--telegram")
    assert result.exit_code == 1
    assert "Telegram refused" in result.output
    assert "the app is deployed; retry the webhook with `iris deploy --telegram --skip-deploy`" \
        in result.output


def test_a_failing_secret_creation_stops_before_deploying(configure, modal_log, monkeypatch):
    configure()
    monkeypatch.setenv("FAKE_MODAL_FAIL", "secret")
    result = deploy()
    assert result.exit_code == 1
    assert "`modal secret create` failed (exit 1):\nError: secret failed" in result.output
    assert [c["argv"][0] for c in calls(modal_log)] == ["secret"]


def test_whatsapp_discord_and_email_get_their_urls_and_discord_its_commands(
        configure, modal_log, monkeypatch):
    from iris_testing.discord_api import FakeDiscord

    discord = FakeDiscord()
    with serve(discord.app) as server:
        monkeypatch.setenv("IRIS_DISCORD_API_BASE", f"{server.url}/api/v10")
        configure(**{"--whatsapp-token": "EAAG-t", "--whatsapp-phone-number-id": "1065",
                     "--whatsapp-app-secret": "app-secret",
                     "--discord-application-id": discord.application_id,
                     "--discord-public-key": discord.public_key,
                     "--discord-bot-token": discord.bot_token,
                     "--email-from": "iris@example.com",
                     "--email-smtp-url": "smtp://iris:pw@mail.example.com:587"})
        result = deploy("--whatsapp", "--discord", "--email")
        assert result.exit_code == 0, result.output
    secret = calls(modal_log)[0]["secret"]
    for key in ("IRIS_WHATSAPP_VERIFY_TOKEN", "IRIS_DISCORD_BOT_TOKEN", "IRIS_EMAIL_SMTP_URL"):
        assert secret[key]
    assert f"Callback URL:  {WEB}/whatsapp/webhook" in result.output
    assert f"Verify token:  {secret['IRIS_WHATSAPP_VERIFY_TOKEN']}" in result.output
    assert f"{WEB}/discord/interactions" in result.output
    assert f"{WEB}/email/inbound" in result.output
    assert "Registered" in result.output and "/ask" in result.output
    assert {"ask", "new", "link"} <= {c["name"] for c in discord.commands}


def test_a_platform_flag_without_its_settings_is_named(configure, modal_log):
    configure()
    result = deploy("--whatsapp", "--check")
    assert result.exit_code == 1
    assert "IRIS_WHATSAPP_TOKEN" in result.output and calls(modal_log) == []


def test_teams_and_google_chat_get_their_secrets_and_endpoint_urls(configure, modal_log):
    key = '{"client_email": "iris@p.iam.gserviceaccount.com", "private_key": "k", ' \
          '"token_uri": "https://oauth2.googleapis.com/token"}'
    configure(**{"--teams-app-id": "3f2c1e8a-5b7d-4c9e-8a1f-0d6b2e4c7a91",
                 "--teams-app-password": "client-secret",
                 "--googlechat-audience": "123456789012",
                 "--googlechat-service-account": key})
    result = deploy("--teams", "--googlechat")
    assert result.exit_code == 0, result.output
    secret = calls(modal_log)[0]["secret"]
    assert secret["IRIS_TEAMS_APP_PASSWORD"] == "client-secret"
    assert secret["IRIS_GOOGLECHAT_SERVICE_ACCOUNT"] == key
    assert secret["IRIS_TEAMS_APP_ID"] == "3f2c1e8a-5b7d-4c9e-8a1f-0d6b2e4c7a91"
    assert f"{WEB}/teams/messages" in result.output
    assert f"{WEB}/googlechat/events" in result.output
    assert "Project Number (123456789012)" in result.output


def test_teams_without_its_password_is_named(configure, modal_log):
    configure(**{"--teams-app-id": "3f2c1e8a-5b7d-4c9e-8a1f-0d6b2e4c7a91"})
    result = deploy("--teams", "--check")
    assert result.exit_code == 1
    assert "IRIS_TEAMS_APP_PASSWORD" in result.output and calls(modal_log) == []


def test_line_gets_its_webhook_url_and_its_secrets_are_pushed(configure, modal_log):
    configure(**{"--line-channel-secret": "line-secret",
                 "--line-channel-access-token": "line-token"})
    result = deploy("--line")
    assert result.exit_code == 0, result.output
    secret = calls(modal_log)[0]["secret"]
    assert secret["IRIS_LINE_CHANNEL_SECRET"] == "line-secret"
    assert secret["IRIS_LINE_CHANNEL_ACCESS_TOKEN"] == "line-token"
    assert f"Webhook URL:  {WEB}/line/webhook" in result.output


def test_line_without_its_settings_is_named(configure, modal_log):
    configure()
    result = deploy("--line", "--check")
    assert result.exit_code == 1
    assert "IRIS_LINE_CHANNEL_ACCESS_TOKEN" in result.output and calls(modal_log) == []


def test_sms_gets_its_public_webhook_url_and_its_secrets_are_pushed(configure, modal_log):
    configure(**{"--twilio-account-sid": "AC" + "0" * 32, "--twilio-auth-token": "tw-token",
                 "--twilio-from-number": "+15005550006",
                 "--public-url": "https://iris.example.net"})
    result = deploy("--sms")
    assert result.exit_code == 0, result.output
    secret = calls(modal_log)[0]["secret"]
    assert secret["IRIS_TWILIO_AUTH_TOKEN"] == "tw-token"
    assert secret["IRIS_PUBLIC_URL"] == "https://iris.example.net"
    assert "https://iris.example.net/sms/webhook" in result.output


def test_sms_without_the_public_url_is_named(configure, modal_log):
    configure(**{"--twilio-account-sid": "AC" + "0" * 32, "--twilio-auth-token": "tw-token",
                 "--twilio-from-number": "+15005550006"})
    result = deploy("--sms", "--check")
    assert result.exit_code == 1
    assert "IRIS_PUBLIC_URL" in result.output and calls(modal_log) == []


def test_matrix_gets_its_registration_url_and_its_secrets_are_pushed(configure, modal_log):
    configure(**{"--matrix-homeserver-url": "https://matrix.example.org",
                 "--matrix-user-id": "@iris:example.org", "--matrix-hs-token": "hs-t",
                 "--matrix-as-token": "as-t"})
    result = deploy("--matrix")
    assert result.exit_code == 0, result.output
    secret = calls(modal_log)[0]["secret"]
    assert (secret["IRIS_MATRIX_HS_TOKEN"], secret["IRIS_MATRIX_AS_TOKEN"]) == ("hs-t", "as-t")
    assert f"url: {WEB}" in result.output and "sender_localpart: iris" in result.output
