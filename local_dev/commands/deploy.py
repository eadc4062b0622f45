"""``iris deploy``: check everything, create the Modal secret, ``modal deploy``, wire webhooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import click

from core.config import Settings, dotenv_path, load_settings
from core.dotenv import read_dotenv, update_dotenv, write_private
from core.errors import ConfigError


def _fail(message: str, code: int = 1) -> NoReturn:
    """Print ``message`` to stderr and exit: it never returns, so callers need no fallback."""
    click.echo(message, err=True)
    sys.exit(code)


def _settings() -> Settings:
    try:
        return load_settings()
    except ConfigError as exc:
        _fail(f"config error: {exc}", 2)


def _git_tag(root: Path) -> str | None:
    try:
        done = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=root, timeout=10,
                              capture_output=True, text=True)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def _ensure_telegram_secret(settings: Settings) -> tuple[Settings, bool]:
    """Generate the webhook secret Telegram will send back, stored in .env; True if new."""
    from infra.webhooks import new_telegram_secret

    if settings.telegram_token is None or settings.telegram_secret is not None:
        return settings, False
    path = dotenv_path(settings.config_path or settings.home / "iris.yaml")
    update_dotenv(path, {"IRIS_TELEGRAM_SECRET": new_telegram_secret()})
    click.echo(f"Generated a Telegram webhook secret (IRIS_TELEGRAM_SECRET in {path}).")
    return _settings(), True


def _modal_environ(settings: Settings) -> dict[str, str]:
    from infra.image import project_root

    root = project_root()
    env = dict(os.environ)
    env["IRIS_MODAL_APP"] = settings.modal_app
    env["IRIS_SANDBOX_MODAL_APP"] = settings.sandbox_modal_app
    if (root / "pyproject.toml").is_file():
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    return env


def _print_report(report: Any) -> None:
    for note in report.notes:
        click.echo(f"  · {note}")
    for warning in report.warnings:
        click.echo(f"  ! {warning}")
    for problem in report.problems:
        click.echo(f"  ✗ {problem.check}: {problem.message}\n      fix: {problem.fix}", err=True)


def _deployed_url(settings: Settings, url: str | None) -> str:
    if url:
        return url.rstrip("/")
    from infra.deploy import deploy_record

    record = deploy_record(settings.home)
    try:
        saved = json.loads(record.read_text())
        if saved.get("app") == settings.modal_app and saved.get("url"):
            return str(saved["url"])
    except (OSError, ValueError):
        pass
    _fail(f"no deployment of {settings.modal_app!r} recorded in {record}: pass --url "
          "https://…modal.run (see `modal app list`)")


def _register(ctx: click.Context, base_url: str, *, telegram: bool, slack: bool,
              others: tuple[str, ...] = ()) -> None:
    """Through `iris telegram set-webhook` and `iris slack manifest`, so there is one way to
    register each platform."""
    if telegram:
        from local_dev.commands.telegram import set_webhook

        try:
            ctx.invoke(set_webhook, url=base_url, secret=None, drop_pending=False)
        except SystemExit as exc:
            if exc.code:
                click.echo("(the app is deployed; retry the webhook with `iris deploy --telegram "
                           "--skip-deploy`)", err=True)
            raise
    if slack:
        from local_dev.commands.slack import manifest_command

        click.echo(f"Slack: Slack has no API to set an app's Request URL. In "
                   f"https://api.slack.com/apps → your app → Event Subscriptions, set it to "
                   f"{base_url.rstrip('/')}/slack/events, or create the app from this manifest "
                   "(Create New App → From a manifest), install it, put its bot token and "
                   "signing secret in .env (`iris setup`) and `iris deploy --push-secret`:\n")
        ctx.invoke(manifest_command, url=base_url, name="Iris", as_json=False)
    if others:
        from local_dev.clikit import settings_or_exit
        from local_dev.commands.discord import register_commands
        from local_dev.platforms_setup import setup_lines

        settings = settings_or_exit()
        for name in others:
            click.echo("")
            for line in setup_lines(settings, base_url, name):
                click.echo(line)
            if name == "discord":
                ctx.invoke(register_commands)


@click.command("deploy")
@click.option("--telegram", is_flag=True, help="Register the Telegram webhook after deploying.")
@click.option("--slack", is_flag=True, help="Print the Slack Events URL and app manifest.")
@click.option("--whatsapp", is_flag=True, help="Print the WhatsApp webhook URL and verify token.")
@click.option("--discord", is_flag=True,
              help="Register Discord's commands and print the interactions endpoint URL.")
@click.option("--email", is_flag=True, help="Print the inbound email URL to give your provider.")
@click.option("--teams", is_flag=True, help="Print the Teams bot's messaging endpoint URL.")
@click.option("--googlechat", is_flag=True, help="Print the Google Chat app's endpoint URL.")
@click.option("--line", is_flag=True, help="Print the LINE webhook URL.")
@click.option("--sms", is_flag=True, help="Print the Twilio SMS webhook URL.")
@click.option("--matrix", is_flag=True, help="Print the Matrix registration's url.")
@click.option("--push-secret", is_flag=True,
              help="Replace the Modal secret with iris.yaml + .env (created anyway if missing).")
@click.option("--tag", help="Version tag for this deployment [default: git describe].")
@click.option("--check", "check_only", is_flag=True, help="Run the checks only; deploy nothing.")
@click.option("--skip-deploy", is_flag=True,
              help="Do not deploy; only register webhooks for the recorded (or --url) deployment.")
@click.option("--url", help="The deployment's base URL, for --skip-deploy.")
@click.pass_context
def deploy(ctx: click.Context, telegram: bool, slack: bool, whatsapp: bool, discord: bool,
           email: bool, teams: bool, googlechat: bool, line: bool, sms: bool, matrix: bool,
           push_secret: bool, tag: str | None, check_only: bool,
           skip_deploy: bool, url: str | None) -> None:
    """Deploy Iris to Modal: checks, the Modal secret, `modal deploy`, webhooks.

    \b
    Checks first (each problem is named with its fix, and nothing is deployed):
      Modal token, cloud-ready settings (Turso, S3/R2, model, sandbox), database and
      bucket reachable, the Modal secret and its keys, platform tokens.
    Then creates the Modal secret from iris.yaml + .env if it does not exist (replaces it
    with --push-secret), runs `modal deploy infra/modal_app.py` and prints the URLs.

    Example: iris deploy --telegram
    """
    from infra.deploy import (
        deploy_record,
        open_database,
        preflight,
        sdk_secret_probe,
        secret_payload,
    )
    from infra.image import project_root
    from infra.modal_cli import ModalCli, ModalCliError, web_url
    from infra.webhooks import endpoints

    settings = _settings()
    others = tuple(name for name, on in (("whatsapp", whatsapp), ("discord", discord),
                                         ("email", email), ("teams", teams),
                                         ("googlechat", googlechat), ("line", line),
                                         ("sms", sms), ("matrix", matrix)) if on)
    if skip_deploy:
        _register(ctx, _deployed_url(settings, url), telegram=telegram, slack=slack,
                  others=others)
        return
    changed = False
    if telegram:
        settings, changed = _ensure_telegram_secret(settings)
    config_path = settings.config_path or settings.home / "iris.yaml"
    dotenv = read_dotenv(dotenv_path(config_path))
    injected = ctx.obj or {}
    click.echo(f"Checking the configuration for Modal app {settings.modal_app!r}…")
    report = preflight(
        settings, os.environ, dotenv, probe=injected.get("secret_probe", sdk_secret_probe),
        database=injected.get("open_database", open_database), telegram=telegram, slack=slack,
        push_secret=push_secret, local_changes=changed, others=others,
    )
    _print_report(report)
    if report.problems:
        _fail(f"{len(report.problems)} problem(s): nothing was deployed.")
    if check_only:
        click.echo("All checks passed.")
        return
    assert report.modal is not None and report.secret is not None
    cli = ModalCli(report.modal, _modal_environ(settings), project_root(), echo=click.echo)
    try:
        if push_secret or not report.secret.exists:
            payload = secret_payload(settings, dotenv)
            cli.create_secret(settings.modal_app, payload, replace=report.secret.exists)
            click.echo(f"Modal secret {settings.modal_app!r}: {len(payload)} keys "
                       f"({', '.join(sorted(payload))}).")
        target = str(project_root() / "infra" / "modal_app.py")
        output = cli.deploy(target, tag=tag or _git_tag(project_root()))
    except ModalCliError as exc:
        _fail(f"error: {exc}")
    base = web_url(output)
    if base is None:
        _fail(f"deployed, but no web URL in modal's output: find it with "
              f"`modal app info {settings.modal_app}`, then `iris deploy --skip-deploy --url URL`")
    write_private(deploy_record(settings.home), json.dumps(
        {"app": settings.modal_app, "url": base, "deployed_at": time.time()}))
    click.echo("")
    for name, endpoint in endpoints(base).items():
        click.echo(f"{name + ':':18} {endpoint}")
    click.echo(f"Logs: modal app logs {settings.modal_app} -f    "
               f"Roll back: modal app rollback {settings.modal_app}")
    _register(ctx, base, telegram=telegram, slack=slack, others=others)


commands = [deploy]
