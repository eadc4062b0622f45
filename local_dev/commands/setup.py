"""``iris setup``: a wizard (or flags) that writes iris.yaml and .env, then runs the doctor."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from core.config import Settings, load_settings
from core.errors import ConfigError

SANDBOXES = click.Choice(["local", "modal", "daytona"])
KEEP = ""


def _current() -> Settings | None:
    try:
        return load_settings()
    except ConfigError as exc:
        click.echo(f"(the current configuration does not load: {exc})", err=True)
        return None


def _ask(label: str, default: str | None, *, secret: bool = False) -> str | None:
    """Prompt; an empty answer keeps the current value (returns None)."""
    if secret:
        shown = " [set; Enter keeps it]" if default else " [Enter to skip]"
        value = click.prompt(label + shown, default=KEEP, show_default=False, hide_input=True)
        return value or None
    value = click.prompt(label, default=default or KEEP, show_default=bool(default))
    return None if value == (default or KEEP) else value


def _secret_default(current: Settings | None, name: str) -> str | None:
    import os

    from local_dev.setup_config import SECRET_ENV

    if name not in Settings.model_fields:
        return os.environ.get(SECRET_ENV[name])
    return current.secret(name) if current is not None else None


def wizard(given: dict[str, Any], current: Settings | None) -> dict[str, Any]:
    """Ask for every answer not given as a flag."""
    answers = dict(given)
    cur = current

    def ask(name: str, label: str, **kwargs: Any) -> None:
        if answers.get(name) is None:
            default = kwargs.pop("default", None)
            if default is None and cur is not None and not kwargs.get("secret"):
                value = getattr(cur, name, None)
                default = None if value is None else str(value)
            if kwargs.get("secret"):
                default = _secret_default(cur, name)
            answers[name] = _ask(label, default, **kwargs)

    click.echo("Model (a litellm model string: anthropic/claude-sonnet-4-5, openai/gpt-4o-mini, "
               "openrouter/…, ollama/…; '-' for the embedded demo model)")
    ask("model", "  model")
    if answers.get("model") == "-":
        answers["model"] = ""
    ask("model_api_base", "  API base URL (only for an OpenAI-compatible server)")
    ask("model_api_key", "  API key", secret=True)

    click.echo("Database (a local file path, or a Turso URL libsql://NAME-ORG.turso.io)")
    ask("db_url", "  database")
    db = answers.get("db_url") or (cur.db_url if cur else "")
    if db.startswith("libsql://"):
        ask("db_auth_token", "  Turso auth token (`turso db tokens create NAME`)", secret=True)

    click.echo("Object store (a local directory, or s3://BUCKET/PREFIX for S3 or R2)")
    ask("objects_url", "  object store")
    objects = answers.get("objects_url") or (cur.objects_url if cur else "")
    if objects.startswith("s3://"):
        ask("s3_endpoint_url", "  endpoint URL (R2: https://ACCOUNT.r2.cloudflarestorage.com; "
            "empty for AWS)")
        ask("s3_region", "  region (R2: auto)")
        ask("aws_access_key_id", "  access key id", secret=True)
        ask("aws_secret_access_key", "  secret access key", secret=True)

    has_telegram = cur is not None and cur.telegram_token is not None
    if answers.get("telegram_token") is None and click.confirm(
            "Connect a Telegram bot?", default=has_telegram):
        ask("telegram_token", "  bot token from @BotFather", secret=True)
    has_slack = cur is not None and cur.slack_bot_token is not None
    if answers.get("slack_bot_token") is None and click.confirm(
            "Connect a Slack app?", default=has_slack):
        ask("slack_signing_secret", "  signing secret (Basic Information)", secret=True)
        ask("slack_bot_token", "  bot token xoxb-… (OAuth & Permissions)", secret=True)
    has_whatsapp = cur is not None and cur.whatsapp_token is not None
    if answers.get("whatsapp_token") is None and click.confirm(
            "Connect a WhatsApp Business number (Cloud API)?", default=has_whatsapp):
        ask("whatsapp_token", "  access token (WhatsApp → API Setup)", secret=True)
        ask("whatsapp_phone_number_id", "  phone number id (WhatsApp → API Setup)")
        ask("whatsapp_app_secret", "  app secret (App settings → Basic)", secret=True)
    has_discord = cur is not None and cur.discord_public_key is not None
    if answers.get("discord_public_key") is None and click.confirm(
            "Connect a Discord application?", default=has_discord):
        ask("discord_application_id", "  application id (General Information)")
        ask("discord_public_key", "  public key (General Information)")
        ask("discord_bot_token", "  bot token (Bot → Reset Token)", secret=True)
    has_email = cur is not None and cur.email_smtp_url is not None
    if answers.get("email_smtp_url") is None and click.confirm(
            "Answer email?", default=has_email):
        ask("email_from", "  Iris' address, e.g. iris@example.com")
        ask("email_smtp_url", "  SMTP server smtp://USER:PASS@HOST:587 or smtps://…:465",
            secret=True)
        ask("email_mailgun_signing_key", "  Mailgun HTTP webhook signing key (empty if you "
            "post raw mail with the generated secret)", secret=True)

    if answers.get("sandbox_backend") is None:
        remote = db.startswith(("libsql://", "https://"))
        default = cur.sandbox_backend if cur else "local"
        if remote and default == "local":
            default = "modal"
        choice = click.prompt("Sandbox for commands (local: this machine; modal/daytona: cloud)",
                              type=SANDBOXES, default=default)
        answers["sandbox_backend"] = None if cur and choice == cur.sandbox_backend else choice
    if answers.get("sandbox_backend") == "daytona":
        ask("daytona_api_key", "  Daytona API key", secret=True)
    return answers


@click.command("setup")
@click.option("--non-interactive", is_flag=True, help="Ask nothing; apply only the flags given.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write this iris.yaml [default: $IRIS_CONFIG or $IRIS_HOME/iris.yaml].")
@click.option("--model", help="litellm model string, e.g. openai/gpt-4o-mini ('' to unset).")
@click.option("--model-api-key", help="The model provider's API key (.env).")
@click.option("--model-api-base", help="Base URL of an OpenAI-compatible server.")
@click.option("--cheap-model", help="A cheaper model for side tasks.")
@click.option("--db", "db_url", help="A database file path, or libsql://NAME-ORG.turso.io.")
@click.option("--db-auth-token", help="Turso auth token (.env).")
@click.option("--objects", "objects_url", help="A local directory, or s3://BUCKET/PREFIX.")
@click.option("--s3-endpoint-url", help="S3-compatible endpoint (R2, MinIO); empty for AWS.")
@click.option("--s3-region", help="S3 region (R2: auto).")
@click.option("--aws-access-key-id", help="S3/R2 access key id (.env).")
@click.option("--aws-secret-access-key", help="S3/R2 secret access key (.env).")
@click.option("--telegram-token", help="Telegram bot token from @BotFather (.env).")
@click.option("--telegram-secret", help="Telegram webhook secret [default: generated].")
@click.option("--slack-signing-secret", help="Slack app signing secret (.env).")
@click.option("--slack-bot-token", help="Slack bot token xoxb-… (.env).")
@click.option("--whatsapp-token", help="WhatsApp Cloud API access token (.env).")
@click.option("--whatsapp-phone-number-id", help="WhatsApp phone number id (API Setup).")
@click.option("--whatsapp-app-secret", help="Meta app secret, signs webhooks (.env).")
@click.option("--whatsapp-verify-token", help="Webhook verify token [default: generated].")
@click.option("--discord-application-id", help="Discord application id.")
@click.option("--discord-public-key", help="Discord application public key (hex).")
@click.option("--discord-bot-token", help="Discord bot token (.env).")
@click.option("--email-from", help="The address Iris sends from, e.g. iris@example.com.")
@click.option("--email-smtp-url", help="smtp://USER:PASS@HOST:587 or smtps://… (.env).")
@click.option("--email-inbound-secret", help="Bearer secret for raw inbound mail "
              "[default: generated].")
@click.option("--email-mailgun-signing-key", help="Mailgun webhook signing key (.env).")
@click.option("--teams-app-id", help="Microsoft App ID of the Teams bot (Azure Bot).")
@click.option("--teams-app-password", help="The bot app registration's client secret (.env).")
@click.option("--googlechat-audience", help="Google Chat app's authentication audience: the "
              "project number or the app URL.")
@click.option("--googlechat-service-account", help="The service account's JSON key, as text, "
              "e.g. \"$(cat key.json)\" (.env).")
@click.option("--line-channel-secret", help="LINE channel secret, signs webhooks (.env).")
@click.option("--line-channel-access-token", help="LINE channel access token (.env).")
@click.option("--twilio-account-sid", help="Twilio account SID (AC…), for SMS.")
@click.option("--twilio-auth-token", help="Twilio auth token, signs SMS webhooks (.env).")
@click.option("--twilio-from-number", help="Iris' Twilio number in E.164, e.g. +15551234567.")
@click.option("--public-url", help="The https URL Twilio calls Iris at (behind any proxy).")
@click.option("--matrix-homeserver-url", help="The homeserver's client-server URL.")
@click.option("--matrix-user-id", help="Iris' Matrix user, e.g. @iris:example.org.")
@click.option("--matrix-hs-token", help="hs_token of the registration YAML (.env).")
@click.option("--matrix-as-token", help="as_token of the registration YAML (.env).")
@click.option("--sandbox", "sandbox_backend", type=SANDBOXES, help="Where commands run.")
@click.option("--daytona-api-key", help="Daytona API key (.env).")
@click.option("--api-key", help="Key for Iris' HTTP API [default: generated].")
@click.option("--timezone", help="IANA timezone, e.g. Europe/Berlin.")
@click.option("--modal-app", help="Modal app (and secret) name [default: iris].")
@click.option("--no-doctor", is_flag=True, help="Do not run `iris doctor` afterwards.")
def setup(non_interactive: bool, config_file: Path | None, no_doctor: bool,
          **flags: str | None) -> None:
    """Write iris.yaml (settings) and .env (secrets, mode 600), then check them.

    Interactive by default; every answer can also be given as a flag. Existing keys and
    lines you did not change are kept, and changed files are backed up first.

    \b
    Examples:
      iris setup
      iris setup --non-interactive --model openai/gpt-4o-mini --model-api-key sk-… \\
        --db libsql://iris-me.turso.io --db-auth-token … --objects s3://my-bucket/iris \\
        --s3-endpoint-url https://ACCOUNT.r2.cloudflarestorage.com --s3-region auto \\
        --aws-access-key-id … --aws-secret-access-key … --telegram-token 123:ABC… \\
        --sandbox modal
    """
    from local_dev.commands.doctor import print_report
    from local_dev.doctor import run_checks
    from local_dev.setup_config import Answers, plan, write

    current = _current()
    home = current.home if current else Path(load_home())
    config_path = (config_file or (current.config_path if current else None)
                   or home / "iris.yaml").expanduser().resolve()
    given = {k: v for k, v in flags.items() if v is not None}
    if not non_interactive:
        click.echo(f"Configuring {config_path} (secrets go to .env beside it; Enter keeps a "
                   "value).")
        given = {k: v for k, v in wizard(given, current).items() if v is not None}
    try:
        result = plan(Answers(**given), config_path, current)
        written = write(result, home)
    except ConfigError as exc:
        click.echo(f"config error: {exc}\nNothing was written.", err=True)
        sys.exit(2)
    for path in written.changed:
        click.echo(f"Wrote {path}")
    for path in written.backups:
        click.echo(f"  (previous version kept as {path})")
    if not written.changed:
        click.echo("Nothing changed.")
    for name in result.generated:
        click.echo(f"Generated {name} (in {result.env_path}).")
    default_config = home / "iris.yaml"
    if config_path != default_config.resolve():
        click.echo(f"This is not the default config file: export IRIS_CONFIG={config_path}")
    if no_doctor:
        return
    click.echo("\nChecking it (iris doctor):")
    env = None
    if config_path != default_config.resolve():
        import os

        env = {**os.environ, "IRIS_CONFIG": str(config_path)}
    if print_report(run_checks(env)):
        sys.exit(1)


def load_home() -> str:
    import os

    return os.path.expanduser(os.environ.get("IRIS_HOME") or "~/.iris")


commands = [setup]
