"""``iris slack manifest``: the Slack app manifest Iris needs (scopes, events, /iris)."""

from __future__ import annotations

import json
from typing import Any

import click

BOT_SCOPES = [
    "app_mentions:read",   # @Iris in channels
    "chat:write",          # replies
    "im:history",          # direct messages
    "im:read",
    "im:write",
    "channels:history",    # follow-ups in threads Iris takes part in
    "groups:history",
    "mpim:history",
    "commands",            # /iris
    "files:read",          # files people share with Iris (documents and images)
]
BOT_EVENTS = ["app_mention", "message.im", "message.channels", "message.groups",
              "message.mpim"]


def manifest(name: str, url: str) -> dict[str, Any]:
    events_url = url.rstrip("/") + "/slack/events"
    return {
        "display_information": {
            "name": name,
            "description": "A personal AI agent that remembers, learns skills and acts.",
        },
        "features": {
            "app_home": {"messages_tab_enabled": True,
                         "messages_tab_read_only_enabled": False},
            "bot_user": {"display_name": name, "always_online": True},
            "slash_commands": [{
                "command": "/iris",
                "url": events_url,
                "description": "Talk to Iris' commands: new, stop, help, memory, usage…",
                "usage_hint": "[new | stop | help | memory | skills | usage | model | link]",
                "should_escape": False,
            }],
        },
        "oauth_config": {"scopes": {"bot": BOT_SCOPES}},
        "settings": {
            "event_subscriptions": {"request_url": events_url, "bot_events": BOT_EVENTS},
            "interactivity": {"is_enabled": True, "request_url": events_url},
            "org_deploy_enabled": False,
            "socket_mode_enabled": False,
            "token_rotation_enabled": False,
        },
    }


@click.group("slack")
def slack_group() -> None:
    """Connect Iris to a Slack workspace."""


@slack_group.command("manifest")
@click.option("--url", help="Iris' public https address [default: IRIS_PUBLIC_URL].")
@click.option("--name", default="Iris", show_default=True, help="The app's name in Slack.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of YAML.")
def manifest_command(url: str | None, name: str, as_json: bool) -> None:
    """Print a Slack app manifest with the scopes, events and /iris command Iris uses.

    Paste it at https://api.slack.com/apps → Create New App → From a manifest, install the
    app, then set IRIS_SLACK_BOT_TOKEN (xoxb-…) and IRIS_SLACK_SIGNING_SECRET.

    Example: iris slack manifest --url https://me--iris-web.modal.run > slack.yaml
    """
    from local_dev.clikit import settings_or_exit

    base = url or settings_or_exit().public_url
    if not base:
        click.echo("No --url or IRIS_PUBLIC_URL: replace YOUR-IRIS-HOST in the manifest.",
                   err=True)
        base = "https://YOUR-IRIS-HOST"
    if not base.startswith("https://"):
        raise click.BadParameter("Slack only calls https:// addresses", param_hint="--url")
    document = manifest(name, base)
    if as_json:
        click.echo(json.dumps(document, indent=2))
        return
    import yaml

    click.echo(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), nl=False)


commands = [slack_group]
