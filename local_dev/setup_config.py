"""What ``iris setup`` writes: settings to iris.yaml, secrets to the .env beside it.

Answers are merged into the existing files (other keys and lines are kept), the result is
validated by loading it exactly as Iris will before anything is written, and a file that
changes is first copied to a timestamped backup.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.config import Settings, dotenv_path, load_settings
from core.dotenv import read_dotenv, update_dotenv, write_private
from core.errors import ConfigError

YAML_FIELDS = ("model", "model_api_base", "cheap_model", "db_url", "objects_url",
               "s3_endpoint_url", "s3_region", "sandbox_backend", "timezone", "modal_app",
               "whatsapp_phone_number_id", "discord_public_key", "discord_application_id",
               "email_from", "teams_app_id", "googlechat_audience", "twilio_account_sid",
               "twilio_from_number", "public_url",
               "matrix_homeserver_url", "matrix_user_id")
SECRET_ENV = {
    "model_api_key": "IRIS_MODEL_API_KEY",
    "db_auth_token": "IRIS_DB_AUTH_TOKEN",
    "api_key": "IRIS_API_KEY",
    "telegram_token": "IRIS_TELEGRAM_TOKEN",
    "telegram_secret": "IRIS_TELEGRAM_SECRET",
    "slack_signing_secret": "IRIS_SLACK_SIGNING_SECRET",
    "slack_bot_token": "IRIS_SLACK_BOT_TOKEN",
    "whatsapp_token": "IRIS_WHATSAPP_TOKEN",
    "whatsapp_app_secret": "IRIS_WHATSAPP_APP_SECRET",
    "whatsapp_verify_token": "IRIS_WHATSAPP_VERIFY_TOKEN",
    "discord_bot_token": "IRIS_DISCORD_BOT_TOKEN",
    "email_smtp_url": "IRIS_EMAIL_SMTP_URL",
    "email_inbound_secret": "IRIS_EMAIL_INBOUND_SECRET",
    "email_mailgun_signing_key": "IRIS_EMAIL_MAILGUN_SIGNING_KEY",
    "daytona_api_key": "IRIS_DAYTONA_API_KEY",
    "teams_app_password": "IRIS_TEAMS_APP_PASSWORD",
    "googlechat_service_account": "IRIS_GOOGLECHAT_SERVICE_ACCOUNT",
    "line_channel_secret": "IRIS_LINE_CHANNEL_SECRET",
    "line_channel_access_token": "IRIS_LINE_CHANNEL_ACCESS_TOKEN",
    "twilio_auth_token": "IRIS_TWILIO_AUTH_TOKEN",
    "matrix_hs_token": "IRIS_MATRIX_HS_TOKEN",
    "matrix_as_token": "IRIS_MATRIX_AS_TOKEN",
    "aws_access_key_id": "AWS_ACCESS_KEY_ID",
    "aws_secret_access_key": "AWS_SECRET_ACCESS_KEY",
}


class Answers(BaseModel):
    """Everything setup can set; None leaves the current value alone."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    model_api_base: str | None = None
    cheap_model: str | None = None
    db_url: str | None = None
    objects_url: str | None = None
    s3_endpoint_url: str | None = None
    s3_region: str | None = None
    sandbox_backend: str | None = None
    timezone: str | None = None
    modal_app: str | None = None
    model_api_key: str | None = None
    db_auth_token: str | None = None
    api_key: str | None = None
    telegram_token: str | None = None
    telegram_secret: str | None = None
    slack_signing_secret: str | None = None
    slack_bot_token: str | None = None
    whatsapp_token: str | None = None
    whatsapp_app_secret: str | None = None
    whatsapp_verify_token: str | None = None
    whatsapp_phone_number_id: str | None = None
    discord_public_key: str | None = None
    discord_application_id: str | None = None
    discord_bot_token: str | None = None
    email_smtp_url: str | None = None
    email_from: str | None = None
    email_inbound_secret: str | None = None
    email_mailgun_signing_key: str | None = None
    daytona_api_key: str | None = None
    teams_app_id: str | None = None
    teams_app_password: str | None = None
    googlechat_audience: str | None = None
    googlechat_service_account: str | None = None
    line_channel_secret: str | None = None
    line_channel_access_token: str | None = None
    twilio_account_sid: str | None = None
    twilio_auth_token: str | None = None
    twilio_from_number: str | None = None
    public_url: str | None = None
    matrix_homeserver_url: str | None = None
    matrix_user_id: str | None = None
    matrix_hs_token: str | None = None
    matrix_as_token: str | None = None
    aws_access_key_id: str | None = None
    aws_secret_access_key: str | None = None


@dataclass
class Plan:
    config_path: Path
    env_path: Path
    yaml_values: dict[str, Any]
    env_updates: dict[str, str]
    generated: list[str] = field(default_factory=list)


@dataclass
class Written:
    changed: list[Path]
    backups: list[Path]
    settings: Settings


def normalise_db(value: str) -> str:
    """A path becomes a ``file:`` URL with an absolute path; URLs pass through."""
    if "://" in value or value.startswith("file:"):
        return value
    return f"file:{Path(value).expanduser().resolve()}"


def normalise_objects(value: str) -> str:
    if "://" in value or value.startswith("file:"):
        return value
    return str(Path(value).expanduser().resolve())


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    if not path.exists():
        return {}
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        raise ConfigError(str(path), "not valid YAML; fix or move it, then rerun") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(str(path), "must be a mapping of setting: value")
    return raw


def plan(answers: Answers, config_path: Path, current: Settings | None) -> Plan:
    env_path = dotenv_path(config_path)
    yaml_values = _read_yaml(config_path)
    existing_env = read_dotenv(env_path)
    given = answers.model_dump(exclude_none=True)
    if "db_url" in given:
        given["db_url"] = normalise_db(given["db_url"])
    if "objects_url" in given:
        given["objects_url"] = normalise_objects(given["objects_url"])
    for name in YAML_FIELDS:
        if name in given:
            if given[name] == "":
                yaml_values.pop(name, None)
            else:
                yaml_values[name] = given[name]
    env_updates = {SECRET_ENV[name]: value for name, value in given.items()
                   if name in SECRET_ENV and value != ""}
    generated: list[str] = []

    def has(name: str) -> bool:
        env = SECRET_ENV[name]
        return bool(env_updates.get(env) or existing_env.get(env)
                    or (current is not None and getattr(current, name, None) is not None))

    if not has("api_key"):
        env_updates["IRIS_API_KEY"] = f"iris-{secrets.token_urlsafe(24)}"
        generated.append("IRIS_API_KEY")
    if has("telegram_token") and not has("telegram_secret"):
        from infra.webhooks import new_telegram_secret

        env_updates["IRIS_TELEGRAM_SECRET"] = new_telegram_secret()
        generated.append("IRIS_TELEGRAM_SECRET")
    if has("whatsapp_token") and not has("whatsapp_verify_token"):
        env_updates["IRIS_WHATSAPP_VERIFY_TOKEN"] = secrets.token_urlsafe(24)
        generated.append("IRIS_WHATSAPP_VERIFY_TOKEN")
    if has("email_smtp_url") and not has("email_inbound_secret"):
        env_updates["IRIS_EMAIL_INBOUND_SECRET"] = secrets.token_urlsafe(32)
        generated.append("IRIS_EMAIL_INBOUND_SECRET")
    return Plan(config_path, env_path, yaml_values, env_updates, generated)


def _dump_yaml(values: dict[str, Any]) -> str:
    import yaml

    header = "# Iris settings (secrets live in .env beside this file). `iris doctor` checks them.\n"
    return header + yaml.safe_dump(values, sort_keys=False, allow_unicode=True)


def validate(result: Plan, home: Path) -> Settings:
    """Load the would-be files exactly as Iris will (real environment left out)."""
    with tempfile.TemporaryDirectory(prefix="iris-setup-") as tmp:
        config = Path(tmp) / "iris.yaml"
        config.write_text(_dump_yaml(result.yaml_values), encoding="utf-8")
        env_file = dotenv_path(config)
        if result.env_path.exists():
            shutil.copyfile(result.env_path, env_file)
        if result.env_updates:
            update_dotenv(env_file, result.env_updates)
        return load_settings({"IRIS_HOME": str(home), "IRIS_CONFIG": str(config)})


def _backup(path: Path, stamp: str) -> Path:
    target = path.with_name(f"{path.name}.bak-{stamp}")
    write_private(target, path.read_text(encoding="utf-8"))
    return target


def write(result: Plan, home: Path) -> Written:
    settings = validate(result, home)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    changed: list[Path] = []
    backups: list[Path] = []
    text = _dump_yaml(result.yaml_values)
    config = result.config_path
    old = config.read_text(encoding="utf-8") if config.exists() else None
    if old != text:
        if old is not None:
            backups.append(_backup(config, stamp))
        config.parent.mkdir(parents=True, exist_ok=True)
        write_private(config, text)
        changed.append(config)
    current = read_dotenv(result.env_path)
    if any(current.get(k) != v for k, v in result.env_updates.items()):
        if result.env_path.exists():
            backups.append(_backup(result.env_path, stamp))
        update_dotenv(result.env_path, result.env_updates)
        changed.append(result.env_path)
    return Written(changed, backups, settings)
