"""``iris users …``: list users, show one, link accounts into one user."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import click

from core.errors import IrisUsageError, NotFound
from local_dev.clikit import friendly, opened, operator, resolve_user


def _describe(store: Any, settings: Any, user: Any) -> dict[str, Any]:
    from core.memory.book import Limits, MemoryBook

    usage = MemoryBook(store).usage(user.id, Limits.from_settings(settings))
    accounts = []
    for account in store.users.accounts(user.id):
        state = store.access.state(account)
        accounts.append({
            "account": account,
            "approved": bool(state and state.approved),
            "approved_by": state.approved_by if state else None,
            "locked_until": state.locked_until if state else None,
        })
    return {
        "id": user.id, "kind": user.kind, "display_name": user.display_name,
        "is_owner": user.is_owner, "model": user.model, "merged_into": user.merged_into,
        "created_at": user.created_at, "accounts": accounts,
        "memory": {t: u.header() for t, u in usage.items()},
        "archived": store.memory.count_archive(user.id),
        "sessions": store.sessions.count(user.id),
        "messages": store.messages.count(user.id),
    }


@click.group("users")
def users_group() -> None:
    """Users and their platform accounts (telegram:42, slack:T1/U9, http:alice).

    \b
    Examples:
      iris users list
      iris users show telegram:42
      iris users link telegram:42 slack:T1/U9
    """


@users_group.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include users merged into others.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def users_list(show_all: bool, as_json: bool) -> None:
    """Every user with accounts and memory use.

    Example: iris users list --json
    """
    with opened() as (settings, store):
        users = [u for u in store.users.list_all() if show_all or not u.merged_into]
        described = [_describe(store, settings, u) for u in users]
        if as_json:
            click.echo(json.dumps(described, indent=2))
            return
        if not described:
            click.echo("no users yet")
        for info in described:
            accounts = ", ".join(a["account"] for a in info["accounts"]) or "(no accounts)"
            flags = " owner" if info["is_owner"] else ""
            flags += f" merged into {info['merged_into']}" if info["merged_into"] else ""
            click.echo(f"{info['id']}  {info['kind']}{flags}  {accounts}")
            click.echo(f"    {info['memory']['memory']}  {info['memory']['user']}  "
                       f"{info['sessions']} sessions")


@users_group.command("show")
@click.argument("user_ref")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def users_show(user_ref: str, as_json: bool) -> None:
    """One user: accounts (approved or not), memory use, sessions.

    Example: iris users show slack:T1/U9
    """
    with opened() as (settings, store):
        info = _describe(store, settings, store.users.get(resolve_user(store, user_ref)))
        if as_json:
            click.echo(json.dumps(info, indent=2))
            return
        created = datetime.fromtimestamp(info["created_at"], UTC)
        click.echo(f"{info['id']} ({info['kind']}{', owner' if info['is_owner'] else ''}), "
                   f"since {created:%Y-%m-%d}; model: {info['model'] or 'default'}")
        for account in info["accounts"]:
            state = "approved" if account["approved"] else "not approved"
            click.echo(f"  {account['account']}: {state}")
        click.echo(f"  {info['memory']['memory']}\n  {info['memory']['user']}")
        click.echo(f"  {info['archived']} archived memory entries, {info['sessions']} sessions, "
                   f"{info['messages']} messages")


@users_group.command("link")
@click.argument("keep")
@click.argument("other")
@friendly
def users_link(keep: str, other: str) -> None:
    """Make OTHER part of KEEP's user: OTHER's accounts, memory, sessions, messages and usage
    move to KEEP (nothing is deleted; what cannot move is reported). OTHER may be an account
    that has never written: it is then attached to KEEP.

    Example: iris users link telegram:42 slack:T1/U9
    """
    from core.identity.merge import merge_users
    from core.memory.book import Limits

    with opened() as (settings, store):
        dest = resolve_user(store, keep)
        try:
            source = store.users.resolve(other)
        except NotFound:
            if ":" not in other:
                raise
            store.users.attach(other, dest)
            store.access.approve(other, operator())
            click.echo(f"attached {other} to {dest}")
            return
        if source == dest:
            raise IrisUsageError(f"{keep} and {other} are already the same user ({dest})")
        report = merge_users(
            store, dest, source, limits=Limits.from_settings(settings), who=operator()
        )
        for line in report.lines():
            click.echo(line)


commands = [users_group]
