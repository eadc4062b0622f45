"""``iris telegram …``: register Iris' webhook with Telegram and look at it."""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import click

from core.config import Settings, dotenv_path
from core.errors import ConfigError, IrisUsageError

SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
WEBHOOK_PATH = "/telegram/webhook"


def _settings() -> Settings:
    from local_dev.clikit import settings_or_exit

    return settings_or_exit()


def _token(settings: Settings) -> str:
    token = settings.secret("telegram_token")
    if not token:
        raise ConfigError("IRIS_TELEGRAM_TOKEN", "not set; create a bot with @BotFather and "
                          "set its token in IRIS_TELEGRAM_TOKEN (or telegram_token in iris.yaml)")
    return token


def webhook_url(url: str) -> str:
    """``https://host`` → ``https://host/telegram/webhook``; a full path is kept."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.netloc:
        raise IrisUsageError(f"Telegram only calls https:// webhooks (got {url!r})")
    if parts.path in ("", "/"):
        return url.rstrip("/") + WEBHOOK_PATH
    return url


def _with_bot(settings: Settings, action: Callable[[Any], Awaitable[Any]]) -> Any:
    from telegram import Bot
    from telegram.error import TelegramError

    base = settings.telegram_api_base.rstrip("/")

    async def run() -> Any:
        bot = Bot(_token(settings), base_url=f"{base}/bot", base_file_url=f"{base}/file/bot")
        try:
            return await action(bot)
        finally:
            await bot.shutdown()

    try:
        return asyncio.run(run())
    except TelegramError as exc:
        raise IrisUsageError(f"Telegram refused: {exc}") from None


def _remember_bot(settings: Settings, me: Any) -> str | None:
    """Keep the bot's @username in the store, so the webhook never asks Telegram for it.

    Best effort: the webhook works without it (it asks Telegram after its first group message
    instead), so a database this machine cannot reach, such as a cloud database seen from a
    laptop without its network, is a warning, not a failure. Returns the warning.
    """
    from core.store import CHECK_RETRY_SECONDS, open_store

    try:
        store = open_store(settings, retry_for=CHECK_RETRY_SECONDS)
    except Exception as exc:
        return (f"Could not save @{me.username} in the database ({exc}); Iris will ask "
                "Telegram for it after its first group message.")
    try:
        store.bots.put("telegram", str(me.id), {"id": me.id, "username": me.username,
                                                "first_name": me.first_name})
    finally:
        store.close()
    return None


def _store_secret(settings: Settings, secret: str) -> str:
    from core.dotenv import update_dotenv

    path = dotenv_path(settings.config_path or settings.home / "iris.yaml")
    update_dotenv(path, {"IRIS_TELEGRAM_SECRET": secret})
    return str(path)


@click.group("telegram")
def telegram_group() -> None:
    """Connect Iris to a Telegram bot (token from @BotFather in IRIS_TELEGRAM_TOKEN)."""


@telegram_group.command("set-webhook")
@click.argument("url")
@click.option("--secret", help="Use this secret token instead of a generated one.")
@click.option("--drop-pending", is_flag=True, help="Discard updates Telegram has queued.")
def set_webhook(url: str, secret: str | None, drop_pending: bool) -> None:
    """Point the bot at Iris: Telegram will POST updates to URL with a secret token.

    URL is Iris' public https address (its /telegram/webhook path is added when URL has no
    path). A secret is generated and saved to the .env next to iris.yaml, unless
    IRIS_TELEGRAM_SECRET is already set; Iris refuses webhook calls without it.

    Example: iris telegram set-webhook https://me--iris-web.modal.run
    """
    from local_dev.clikit import friendly

    friendly(_set_webhook)(url, secret, drop_pending)


def _set_webhook(url: str, secret: str | None, drop_pending: bool) -> None:
    settings = _settings()
    _token(settings)
    target = webhook_url(url)
    configured = settings.secret("telegram_secret")
    if secret is not None and not SECRET_RE.match(secret):
        raise IrisUsageError("--secret must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
    chosen = secret or configured or secrets.token_urlsafe(32)
    saved_to = None
    if chosen != configured:
        saved_to = _store_secret(settings, chosen)

    async def register(bot: Any) -> Any:
        from telegram import BotCommand

        from core.commands import REGISTRY, help_text
        from core.platforms.telegram_inbound import UPDATE_TYPES

        help_text()  # loads every command module
        await bot.set_webhook(target, secret_token=chosen, allowed_updates=list(UPDATE_TYPES),
                              drop_pending_updates=drop_pending)
        commands = [BotCommand(c.name, c.summary[:256]) for c in
                    sorted(REGISTRY.values(), key=lambda c: c.name) if re.fullmatch(
                        r"[a-z0-9_]{1,32}", c.name)]
        await bot.set_my_commands(commands)
        return await bot.get_me()

    me = _with_bot(settings, register)
    warning = _remember_bot(settings, me)
    click.echo(f"Telegram will send @{me.username}'s messages to {target}")
    if warning:
        click.echo(warning)
    if saved_to:
        click.echo(f"Saved the webhook secret as IRIS_TELEGRAM_SECRET in {saved_to}.")
        click.echo("Iris running elsewhere (e.g. on Modal) needs the same value: "
                   f"IRIS_TELEGRAM_SECRET={chosen}")
    else:
        click.echo("Using the IRIS_TELEGRAM_SECRET already configured.")


@telegram_group.command("info")
def info() -> None:
    """Show where Telegram sends the bot's updates and the last delivery error.

    Example: iris telegram info
    """
    from local_dev.clikit import friendly

    def show() -> None:
        hook = _with_bot(_settings(), lambda bot: bot.get_webhook_info())
        click.echo(f"url: {hook.url or '(no webhook set)'}")
        click.echo(f"pending updates: {hook.pending_update_count}")
        from core.platforms.telegram_inbound import missing_updates

        allowed = list(hook.allowed_updates or ())
        click.echo(f"update types: {', '.join(allowed) or 'Telegram default'}")
        missing = missing_updates(allowed)
        if hook.url and missing:
            click.echo(f"warning: Telegram never sends {', '.join(missing)}; run "
                       "`iris telegram set-webhook URL` again to register them")
        if hook.last_error_message:
            click.echo(f"last error: {hook.last_error_message} ({hook.last_error_date})")

    friendly(show)()


@telegram_group.command("delete-webhook")
def delete_webhook() -> None:
    """Stop Telegram from calling Iris.

    Example: iris telegram delete-webhook
    """
    from local_dev.clikit import friendly

    def delete() -> None:
        _with_bot(_settings(), lambda bot: bot.delete_webhook())
        click.echo("Webhook removed.")

    friendly(delete)()


commands = [telegram_group]
