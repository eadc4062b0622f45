"""``iris deploy``'s checks and the Modal secret built from the local configuration.

Every check runs (so one run names every missing piece) and each problem carries its fix.
The secret probe talks to Modal; it is a parameter so tests can stand in for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from core.config import SETTING_NAMES, Settings, env_name
from core.model.providers import key_status
from infra.cloud import REQUIRED_SECRET_KEYS, cloud_problems
from infra.modal_cli import modal_executable, modal_token

NOT_IN_SECRET = frozenset({"dispatcher", "modal_app", "sandbox_modal_app", "skills_dir"})
"""Set by the deployment itself (container environment, image paths), never by the secret."""


@dataclass(frozen=True)
class Problem:
    check: str
    message: str
    fix: str


@dataclass(frozen=True)
class SecretState:
    exists: bool
    missing_keys: tuple[str, ...] = ()
    error: str | None = None  # the state could not be read (token, network)


SecretProbe = Callable[[str, list[str]], SecretState]
DatabaseCheck = Callable[[Settings], None]


@dataclass
class Preflight:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    secret: SecretState | None = None
    modal: str | None = None

    def fail(self, check: str, message: str, fix: str) -> None:
        self.problems.append(Problem(check, message, fix))


def to_env(value: Any) -> str:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list | tuple):
        return json.dumps(value)
    return str(value)


def secret_payload(settings: Settings, dotenv: Mapping[str, str]) -> dict[str, str]:
    """The variables the cloud needs: every setting that differs from its default, plus the
    non-IRIS variables of the .env (S3 keys, provider keys)."""
    payload: dict[str, str] = {}
    for name in sorted(SETTING_NAMES - NOT_IN_SECRET):
        value = getattr(settings, name)
        default = Settings.model_fields[name].get_default(call_default_factory=True)
        if value is None or value == default:
            continue
        payload[env_name(name)] = to_env(value)
    for key, value in dotenv.items():
        if not key.startswith("IRIS_") and value:
            payload.setdefault(key, value)
    return payload


# The settings each of the newer platforms needs in the Modal secret (``iris deploy --<name>``).
PLATFORM_KEYS = {
    "whatsapp": ("IRIS_WHATSAPP_TOKEN", "IRIS_WHATSAPP_APP_SECRET",
                 "IRIS_WHATSAPP_PHONE_NUMBER_ID", "IRIS_WHATSAPP_VERIFY_TOKEN"),
    "discord": ("IRIS_DISCORD_PUBLIC_KEY", "IRIS_DISCORD_APPLICATION_ID",
                "IRIS_DISCORD_BOT_TOKEN"),
    "email": ("IRIS_EMAIL_SMTP_URL", "IRIS_EMAIL_FROM"),
    "teams": ("IRIS_TEAMS_APP_ID", "IRIS_TEAMS_APP_PASSWORD"),
    "googlechat": ("IRIS_GOOGLECHAT_AUDIENCE", "IRIS_GOOGLECHAT_SERVICE_ACCOUNT"),
    "line": ("IRIS_LINE_CHANNEL_SECRET", "IRIS_LINE_CHANNEL_ACCESS_TOKEN"),
    "sms": ("IRIS_TWILIO_ACCOUNT_SID", "IRIS_TWILIO_AUTH_TOKEN", "IRIS_TWILIO_FROM_NUMBER",
            "IRIS_PUBLIC_URL"),
    "matrix": ("IRIS_MATRIX_HOMESERVER_URL", "IRIS_MATRIX_USER_ID", "IRIS_MATRIX_HS_TOKEN",
               "IRIS_MATRIX_AS_TOKEN"),
}


def required_keys(settings: Settings, *, telegram: bool, slack: bool,
                  others: tuple[str, ...] = ()) -> list[str]:
    keys = list(REQUIRED_SECRET_KEYS)
    if settings.db_url.startswith("libsql://"):
        keys.append("IRIS_DB_AUTH_TOKEN")
    if settings.objects_url.startswith("s3://"):
        keys += ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
    if telegram:
        keys += ["IRIS_TELEGRAM_TOKEN", "IRIS_TELEGRAM_SECRET"]
    if slack:
        keys += ["IRIS_SLACK_SIGNING_SECRET", "IRIS_SLACK_BOT_TOKEN"]
    for name in others:
        keys += PLATFORM_KEYS[name]
    return keys


def sdk_secret_probe(name: str, keys: list[str], sdk: Any = None) -> SecretState:
    """Ask Modal whether the secret exists and which of ``keys`` it lacks (``sdk``: the
    ``modal`` module or a stand-in)."""
    if sdk is None:
        import modal as sdk
    modal = sdk

    errors = modal.exception
    transport = (errors.AuthError, errors.ConnectionError, errors.TimeoutError,
                 errors.InternalError)

    def holds(required: list[str]) -> bool:
        try:
            modal.Secret.from_name(name, required_keys=required).hydrate()
        except transport:
            raise
        except errors.Error:  # not found, or (the server's answer) lacking a required key
            return False
        return True

    try:
        if not holds([]):
            return SecretState(exists=False)
        if holds(keys):
            return SecretState(exists=True)
        return SecretState(exists=True, missing_keys=tuple(k for k in keys if not holds([k])))
    except modal.exception.AuthError as exc:
        return SecretState(exists=False, error=f"Modal rejected the token ({exc})")
    except Exception as exc:
        return SecretState(exists=False, error=f"could not ask Modal ({type(exc).__name__}: {exc})")


def check_local(settings: Settings, environ: Mapping[str, str], report: Preflight) -> None:
    report.modal = modal_executable(environ)
    if report.modal is None:
        report.fail("modal", "the modal command is not installed",
                    "pip install modal==1.6.4 (it comes with iris-agent)")
    if modal_token(environ) is None:
        report.fail("modal token", "no Modal token found (~/.modal.toml or MODAL_TOKEN_ID and "
                    "MODAL_TOKEN_SECRET)", "run `modal token new` (or `modal setup`)")
    for problem in cloud_problems(settings):
        report.fail(problem.setting, problem.message, problem.fix)
    if settings.api_key is None:
        report.warnings.append("no IRIS_API_KEY: the HTTP API will refuse every request "
                               "(`iris setup` generates one)")


def open_database(settings: Settings) -> None:
    """Open the database as a container will (applying migrations), then close it."""
    from core.store import CHECK_RETRY_SECONDS, open_store

    open_store(settings, retry_for=CHECK_RETRY_SECONDS).close()


def check_reachable(
    settings: Settings, report: Preflight, database: DatabaseCheck = open_database
) -> None:
    """Open the database and touch the bucket, as the cloud will."""
    if settings.db_is_remote:
        try:
            database(settings)
        except Exception as exc:
            report.fail("database", f"cannot open {settings.db_url}: {exc}",
                        "check db_url and IRIS_DB_AUTH_TOKEN (`turso db show NAME --url`, "
                        "`turso db tokens create NAME`)")
    if settings.objects_url.startswith("s3://"):
        try:
            from core.store.objects import open_object_store

            open_object_store(settings.objects_url, s3_endpoint_url=settings.s3_endpoint_url,
                              s3_region=settings.s3_region).check()
        except Exception as exc:
            report.fail("object store", f"cannot use {settings.objects_url}: {exc}",
                        "check the bucket, s3_endpoint_url (R2: https://ACCOUNT.r2."
                        "cloudflarestorage.com) and AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY "
                        "in .env")


def check_payload(settings: Settings, payload: Mapping[str, str], report: Preflight) -> None:
    """What the secret we would create lacks."""
    if settings.model:
        status = key_status(settings, settings.model, payload)
        if not status.ok:
            report.fail("model key", f"no API key for {settings.model} in iris.yaml/.env "
                        "(keys in your shell are not sent to the cloud)",
                        f"put {' or '.join(status.expected)} in .env")
    if settings.objects_url.startswith("s3://"):
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            if key not in payload:
                report.fail("s3 credentials", f"{key} is not in .env (the cloud cannot use "
                            "~/.aws or your shell's variables)", f"add {key}=… to .env")


def check_platforms(settings: Settings, report: Preflight, *, telegram: bool, slack: bool,
                    others: tuple[str, ...] = ()) -> None:
    if telegram and settings.telegram_token is None:
        report.fail("telegram", "--telegram needs a bot token",
                    "iris setup --non-interactive --telegram-token TOKEN (from @BotFather)")
    if slack and (settings.slack_signing_secret is None or settings.slack_bot_token is None):
        report.fail("slack", "--slack needs the signing secret and the bot token",
                    "iris setup --non-interactive --slack-signing-secret … "
                    "--slack-bot-token xoxb-…")
    for name in others:
        missing = [key for key in PLATFORM_KEYS[name]
                   if getattr(settings, key.removeprefix("IRIS_").lower()) is None]
        if name == "email" and settings.email_inbound_secret is None and (
                settings.email_mailgun_signing_key is None):
            missing.append("IRIS_EMAIL_INBOUND_SECRET or IRIS_EMAIL_MAILGUN_SIGNING_KEY")
        if missing:
            report.fail(name, f"--{name} needs {', '.join(missing)}",
                        f"iris setup (answer the {name} questions), then rerun")


def check_secret(
    name: str, keys: list[str], probe: SecretProbe, report: Preflight, *, push: bool,
    local_changes: bool,
) -> None:
    state = report.secret = probe(name, keys)
    if state.error:
        report.fail("modal secret", f"cannot check the Modal secret {name!r}: {state.error}",
                    "check your network and `modal token new`")
    elif not state.exists:
        report.notes.append(f"the Modal secret {name!r} does not exist yet: it will be created "
                            "from iris.yaml and .env")
    elif push:
        report.notes.append(f"the Modal secret {name!r} will be replaced by iris.yaml and .env")
    elif state.missing_keys:
        report.fail("modal secret", f"the Modal secret {name!r} lacks "
                    f"{', '.join(state.missing_keys)}",
                    "rerun with --push-secret to replace it with your local configuration")
    elif local_changes:
        report.fail("modal secret", f"the Modal secret {name!r} predates the Telegram webhook "
                    "secret just generated", "rerun with --push-secret")


def preflight(
    settings: Settings, environ: Mapping[str, str], dotenv: Mapping[str, str], *,
    probe: SecretProbe, database: DatabaseCheck = open_database, telegram: bool = False,
    slack: bool = False, push_secret: bool = False, local_changes: bool = False,
    others: tuple[str, ...] = (),
) -> Preflight:
    report = Preflight()
    check_local(settings, environ, report)
    check_platforms(settings, report, telegram=telegram, slack=slack, others=others)
    check_reachable(settings, report, database)
    payload = secret_payload(settings, dotenv)
    keys = required_keys(settings, telegram=telegram, slack=slack, others=others)
    if modal_token(environ) is not None:
        check_secret(settings.modal_app, keys, probe, report, push=push_secret,
                     local_changes=local_changes)
    state = report.secret
    if state is None or state.error or push_secret or not state.exists:
        check_payload(settings, payload, report)
    return report


def deploy_record(home: Path) -> Path:
    return home / "deploy.json"
