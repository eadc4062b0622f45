"""``iris discord …``: register Iris' slash commands with Discord and print the endpoint URL."""

from __future__ import annotations

import asyncio
from typing import Any

import click

from core.errors import ConfigError

STRING = 3
ASK_DESCRIPTION = "Ask Iris anything"


def application_commands() -> list[dict[str, Any]]:
    """``/ask text:…`` and one Discord command per Iris slash command, each with an optional
    ``args`` option for what follows the command (``/memory args:archive``)."""
    from core.commands import REGISTRY, _load

    _load()
    found: list[dict[str, Any]] = [{
        "name": "ask", "type": 1, "description": ASK_DESCRIPTION, "contexts": [0, 1, 2],
        "options": [{"type": STRING, "name": "text", "description": "Your message",
                     "required": True, "max_length": 6000}],
    }]
    for command in sorted(REGISTRY.values(), key=lambda c: c.name):
        summary = command.summary if len(command.summary) <= 100 else (
            command.summary[:99] + "…")
        found.append({
            "name": command.name, "type": 1, "description": summary, "contexts": [0, 1, 2],
            "options": [{"type": STRING, "name": "args", "description": "What follows the "
                         "command", "required": False}],
        })
    return found


@click.group("discord")
def discord_group() -> None:
    """Connect Iris to Discord (the interactions endpoint)."""


@discord_group.command("register-commands")
def register_commands() -> None:
    """Register /ask and Iris' slash commands as the application's global Discord commands.

    Needs IRIS_DISCORD_BOT_TOKEN and IRIS_DISCORD_APPLICATION_ID (Developer Portal → your app).
    Run it again after upgrading Iris; it overwrites the previous set.

    Example: iris discord register-commands
    """
    from core.contracts.senders import DeliveryFailed
    from core.platforms.discord import DiscordSender
    from local_dev.clikit import settings_or_exit

    settings = settings_or_exit()
    token = settings.secret("discord_bot_token")
    if not token:
        raise ConfigError("IRIS_DISCORD_BOT_TOKEN", "not set (Developer Portal → Bot → Token)")
    if not settings.discord_application_id:
        raise ConfigError("IRIS_DISCORD_APPLICATION_ID",
                          "not set (Developer Portal → General Information → Application ID)")
    sender = DiscordSender(token, settings.discord_application_id, settings.discord_api_base)
    try:
        registered = asyncio.run(sender.register_commands(application_commands()))
    except DeliveryFailed as exc:
        raise click.ClickException(str(exc)) from None
    names = ", ".join(f"/{c['name']}" for c in registered)
    click.echo(f"Registered {len(registered)} commands: {names}")


@discord_group.command("url")
@click.option("--url", help="Iris' public https address [default: IRIS_PUBLIC_URL].")
def url_command(url: str | None) -> None:
    """Print the Interactions Endpoint URL to paste in the Developer Portal.

    Example: iris discord url --url https://me--iris-web.modal.run
    """
    from local_dev.clikit import settings_or_exit

    base = url or settings_or_exit().public_url
    if not base:
        raise click.UsageError("give --url or set IRIS_PUBLIC_URL")
    click.echo(base.rstrip("/") + "/discord/interactions")


commands = [discord_group]
