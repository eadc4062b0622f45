import shutil
import stat

import pytest
import yaml
from click.testing import CliRunner

from core.config import load_settings
from core.dotenv import read_dotenv
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from iris_testing.telegram_api import FakeTelegram
from local_dev.cli import cli

TOKEN = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi"


@pytest.fixture
def llm():
    model = ScriptedLLM()
    with serve(model.app) as server:
        model.url = server.url
        yield model


def test_non_interactive_setup_then_doctor_is_green(
    iris_home, llm, moto_s3, s3_bucket, monkeypatch
):
    args = [
        "setup", "--non-interactive",
        "--model", "openai/scripted-model", "--model-api-base", f"{llm.url}/v1",
        "--model-api-key", "sk-scripted",
        "--db", str(iris_home / "data" / "iris.db"),
        "--objects", f"s3://{s3_bucket}/iris", "--s3-endpoint-url", moto_s3.endpoint_url,
        "--s3-region", "us-east-1", "--aws-access-key-id", "iris-test-key",
        "--aws-secret-access-key", "iris-test-secret",
        "--telegram-token", TOKEN,
        "--slack-signing-secret", "slack-signing", "--slack-bot-token", "xoxb-1-2-abc",
        "--sandbox", "local", "--timezone", "Europe/Berlin",
    ]
    (iris_home / "data").mkdir()
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "Generated IRIS_API_KEY" in result.output
    assert "Generated IRIS_TELEGRAM_SECRET" in result.output

    config = yaml.safe_load((iris_home / "iris.yaml").read_text())
    assert config["db_url"] == f"file:{iris_home / 'data' / 'iris.db'}"
    assert config["objects_url"] == f"s3://{s3_bucket}/iris"
    assert "sk-scripted" not in (iris_home / "iris.yaml").read_text()
    secrets = read_dotenv(iris_home / ".env")
    assert secrets["IRIS_MODEL_API_KEY"] == "sk-scripted"
    assert secrets["AWS_SECRET_ACCESS_KEY"] == "iris-test-secret"
    assert stat.S_IMODE((iris_home / ".env").stat().st_mode) == 0o600

    settings = load_settings()
    assert settings.secret("telegram_secret") == secrets["IRIS_TELEGRAM_SECRET"]
    assert settings.timezone == "Europe/Berlin"

    llm.reply("OK")
    monkeypatch.delenv("IRIS_SANDBOX_ISOLATION")  # the real default: telegram needs walls
    # --online reads Telegram's webhook registration: a fake Bot API with the webhook set
    telegram = FakeTelegram(token=TOKEN)
    with serve(telegram.app) as api:
        monkeypatch.setenv("IRIS_TELEGRAM_API_BASE", api.url)
        assert CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example"]
                                  ).exit_code == 0
        doctor = CliRunner().invoke(cli, ["doctor", "--online"])
    if shutil.which("bwrap") is None:
        assert doctor.exit_code == 1 and "apt-get install bubblewrap" in doctor.output
        return
    assert doctor.exit_code == 0, doctor.output
    assert doctor.output.strip().endswith("0 error(s), 0 warning(s).")
    for check in ("config", "database", "object store", "model", "model call", "api key",
                  "telegram", "slack", "sandbox"):
        assert f"✓ {check}  " in doctor.output
    assert llm.requests[0]["max_tokens"] == 1


def test_setup_keeps_what_it_does_not_change_and_backs_up(iris_home):
    (iris_home / "iris.yaml").write_text("max_iterations: 7\nmodel: openai/old\n")
    (iris_home / ".env").write_text("# mine\nOPENAI_API_KEY=sk-keep\nIRIS_API_KEY=kept-key\n")
    result = CliRunner().invoke(cli, ["setup", "--non-interactive", "--no-doctor",
                                      "--model", "openai/new", "--model-api-key", "sk-new"])
    assert result.exit_code == 0, result.output
    assert yaml.safe_load((iris_home / "iris.yaml").read_text()) == {
        "max_iterations": 7, "model": "openai/new"}
    env_text = (iris_home / ".env").read_text()
    assert env_text.startswith("# mine\nOPENAI_API_KEY=sk-keep\nIRIS_API_KEY=kept-key\n")
    assert "IRIS_MODEL_API_KEY=sk-new" in env_text
    assert "Generated" not in result.output
    backups = sorted(p.name for p in iris_home.iterdir() if ".bak-" in p.name)
    assert [b.split(".bak-")[0] for b in backups] == [".env", "iris.yaml"]
    old = next(iris_home.glob("iris.yaml.bak-*")).read_text()
    assert old == "max_iterations: 7\nmodel: openai/old\n"
    assert stat.S_IMODE(next(iris_home.glob(".env.bak-*")).stat().st_mode) == 0o600

    again = CliRunner().invoke(cli, ["setup", "--non-interactive", "--no-doctor",
                                     "--model", "openai/new"])
    assert "Nothing changed." in again.output


@pytest.mark.parametrize("args", [
    ["--db", "mysql://nope"],
    ["--objects", "ftp://bucket"],
    ["--timezone", "Mars/Olympus"],
    ["--model", "has spaces"],
])
def test_bad_input_is_a_clear_error_and_writes_nothing(iris_home, args):
    (iris_home / "iris.yaml").write_text("model: openai/x\n")
    before = sorted(p.name for p in iris_home.iterdir())
    result = CliRunner().invoke(cli, ["setup", "--non-interactive", *args])
    assert result.exit_code == 2
    assert "config error:" in result.output and "Nothing was written." in result.output
    assert (iris_home / "iris.yaml").read_text() == "model: openai/x\n"
    assert sorted(p.name for p in iris_home.iterdir()) == before


def test_an_unparseable_existing_file_is_left_alone(iris_home):
    (iris_home / ".env").write_text("this is not a dotenv line\n")
    result = CliRunner().invoke(cli, ["setup", "--non-interactive", "--model", "openai/x"])
    assert result.exit_code == 2
    assert ".env: line 1" in result.output
    assert not (iris_home / "iris.yaml").exists()


def test_interactive_wizard(iris_home):
    answers = "\n".join([
        "anthropic/claude-sonnet-4-5",  # model
        "",                              # api base: none
        "sk-ant-typed",                  # key
        "libsql://iris-me.turso.io",     # database
        "turso-tok",                     # its token
        "s3://my-bucket/iris",           # object store
        "https://acct.r2.cloudflarestorage.com",
        "auto",
        "r2-key-id",
        "r2-secret",
        "y", TOKEN,                      # telegram
        "n",                             # slack
        "n", "n", "n",                   # whatsapp, discord, email
        "",                              # sandbox: the default (modal, since the db is remote)
    ]) + "\n"
    result = CliRunner().invoke(cli, ["setup", "--no-doctor"], input=answers)
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((iris_home / "iris.yaml").read_text())
    assert config == {
        "model": "anthropic/claude-sonnet-4-5", "db_url": "libsql://iris-me.turso.io",
        "objects_url": "s3://my-bucket/iris",
        "s3_endpoint_url": "https://acct.r2.cloudflarestorage.com", "s3_region": "auto",
        "sandbox_backend": "modal",
    }
    secrets = read_dotenv(iris_home / ".env")
    assert secrets["IRIS_MODEL_API_KEY"] == "sk-ant-typed"
    assert secrets["IRIS_DB_AUTH_TOKEN"] == "turso-tok"
    assert secrets["AWS_ACCESS_KEY_ID"] == "r2-key-id"
    assert secrets["IRIS_TELEGRAM_TOKEN"] == TOKEN
    assert "IRIS_SLACK_BOT_TOKEN" not in secrets
    assert "sk-ant-typed" not in result.output


def test_another_config_file_is_named_for_iris_config(iris_home, tmp_path):
    target = tmp_path / "project" / "iris.yaml"
    result = CliRunner().invoke(cli, ["setup", "--non-interactive", "--config", str(target),
                                      "--model", "openai/gpt-4o-mini", "--model-api-key", "k"])
    assert result.exit_code == 0, result.output
    assert f"export IRIS_CONFIG={target}" in result.output
    assert read_dotenv(target.parent / ".env")["IRIS_MODEL_API_KEY"] == "k"
    assert "✓ model" in result.output


def test_the_new_platforms_settings_and_generated_secrets(iris_home):
    result = CliRunner().invoke(cli, [
        "setup", "--non-interactive", "--no-doctor", "--whatsapp-token", "EAAG-token",
        "--whatsapp-phone-number-id", "106540352242922", "--whatsapp-app-secret", "app-secret",
        "--discord-application-id", "1187261718928101376", "--discord-public-key", "ab" * 32,
        "--discord-bot-token", "bot-token", "--email-from", "iris@example.com",
        "--email-smtp-url", "smtp://iris:pw@mail.example.com:587"])
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((iris_home / "iris.yaml").read_text())
    assert config["whatsapp_phone_number_id"] == "106540352242922"
    assert config["discord_public_key"] == "ab" * 32 and config["email_from"] == "iris@example.com"
    env = (iris_home / ".env").read_text()
    for name in ("IRIS_WHATSAPP_TOKEN=EAAG-token", "IRIS_DISCORD_BOT_TOKEN=bot-token",
                 "IRIS_EMAIL_SMTP_URL=smtp://iris:pw@mail.example.com:587"):
        assert name in env
    assert "Generated IRIS_WHATSAPP_VERIFY_TOKEN" in result.output
    assert "Generated IRIS_EMAIL_INBOUND_SECRET" in result.output
    bad = CliRunner().invoke(cli, ["setup", "--non-interactive", "--no-doctor",
                                   "--discord-public-key", "not-hex"])
    assert bad.exit_code == 2 and "discord_public_key" in bad.output.lower()
