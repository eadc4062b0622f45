"""``iris webhooks …``: event webhooks, signed inbound endpoints that start a turn per event
(create, list, show, rotate-secret, delete). Not ``iris cron``'s outbound user webhook."""

from __future__ import annotations

import json
from typing import Any

import click

from core.errors import IrisUsageError, NotFound
from local_dev.clikit import USER_HELP, friendly, opened, resolve_user

DELIVER_HELP = (
    "Where each event's answer goes, as for `iris cron add --deliver`: none, inbox, "
    "telegram, slack (the user's latest chat there), telegram:<chat_id>, "
    "slack:[<team>:]<channel>… [default: the user's latest chat, else their inbox]."
)


@click.group("webhooks")
def webhooks_group() -> None:
    """Event webhooks: a signed URL (GitHub, monitoring…) whose every POST starts a turn with
    the payload as untrusted data and your prompt, delivered like a cron run.

    \b
    Examples:
      iris webhooks create ci --user telegram:42 --prompt "Summarise this event" \\
          --deliver slack:C123
      iris webhooks list --user telegram:42
      iris webhooks rotate-secret hook_…
    See docs/webhooks.md for the signature schemes.
    """


def _owner(store: Any, ref: str, user_ref: str | None) -> str:
    if user_ref:
        return resolve_user(store, user_ref)
    owner = store.event_hooks.owner_of(ref)
    if owner is not None:
        return owner
    try:
        return resolve_user(store, None)
    except NotFound:
        raise IrisUsageError(
            f"no webhook with id {ref!r}; to name one by its name, give --user"
        ) from None


def _print(settings: Any, hook: Any, *, secret: bool, as_json: bool) -> None:
    from core.event_hooks.manage import url_of

    data = {**hook.public(), "url": url_of(settings.public_url, hook)}
    if secret:
        data["secret"] = hook.secret
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(f"{hook.id}  {hook.name}")
    click.echo(f"  url:     {data['url']}")
    click.echo(f"  deliver: {data['deliver']}")
    click.echo(f"  prompt:  {hook.prompt}")
    if secret:
        click.echo(f"  secret:  {hook.secret}")
        click.echo(
            "  (shown once: put it in the sender's webhook settings; "
            "`iris webhooks rotate-secret` makes a new one)"
        )


@webhooks_group.command("create")
@click.argument("name")
@click.option("--prompt", required=True, help="What to do with each event.")
@click.option("--deliver", help=DELIVER_HELP)
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def create(
    name: str, prompt: str, deliver: str | None, user_ref: str | None, as_json: bool
) -> None:
    """Create an endpoint; prints its URL and its secret (once)."""
    from core.event_hooks.manage import create_hook

    with opened() as (settings, store):
        user_id = resolve_user(store, user_ref, create=True)
        hook = create_hook(store, user_id, name, prompt, deliver, privileged=True)
        _print(settings, hook, secret=True, as_json=as_json)


@webhooks_group.command("list")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def list_hooks(user_ref: str | None, as_json: bool) -> None:
    """The user's endpoints (without their secrets)."""
    from core.event_hooks.manage import url_of

    with opened() as (settings, store):
        hooks = store.event_hooks.list(resolve_user(store, user_ref))
        if as_json:
            click.echo(
                json.dumps(
                    [{**h.public(), "url": url_of(settings.public_url, h)} for h in hooks],
                    indent=2,
                    ensure_ascii=False,
                )
            )
            return
        if not hooks:
            click.echo("no webhooks")
        for hook in hooks:
            click.echo(f"{hook.id}  {hook.name}  → {hook.target.get('label')}")


@webhooks_group.command("show")
@click.argument("ref")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def show(ref: str, user_ref: str | None, as_json: bool) -> None:
    """One endpoint (id, or name with --user), without its secret."""
    with opened() as (settings, store):
        hook = store.event_hooks.get(_owner(store, ref, user_ref), ref)
        _print(settings, hook, secret=False, as_json=as_json)


@webhooks_group.command("rotate-secret")
@click.argument("ref")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def rotate_secret(ref: str, user_ref: str | None, as_json: bool) -> None:
    """A new secret (printed once); the old one stops working at once."""
    with opened() as (settings, store):
        hook = store.event_hooks.rotate_secret(_owner(store, ref, user_ref), ref)
        _print(settings, hook, secret=True, as_json=as_json)


@webhooks_group.command("delete")
@click.argument("ref")
@click.option("--user", "user_ref", help=USER_HELP)
@friendly
def delete(ref: str, user_ref: str | None) -> None:
    """Delete an endpoint: its URL answers 404 from now on."""
    with opened() as (_, store):
        hook = store.event_hooks.remove(_owner(store, ref, user_ref), ref)
        click.echo(f"deleted {hook.id} ({hook.name})")


commands = [webhooks_group]
