"""``iris team …``: create teams, add and remove members, change roles, list them. Every command
acts as ``--as`` (an account or user id; your local HTTP account by default), and the store
checks that person's role in the team, as it does for ``/team`` in chat."""

from __future__ import annotations

import click

from local_dev.clikit import friendly, opened, resolve_user

AS_OPTION = click.option(
    "--as",
    "actor",
    default=None,
    help="Act as this account or user id (default: your local http account).",
)


@click.group("team")
def team_group() -> None:
    """Teams: shared notes among people whose own memory stays private.

    \b
    Examples:
      iris team create eng --as telegram:42
      iris team add eng slack:T1/U9 --role admin --as telegram:42
      iris team role eng slack:T1/U9 member --as telegram:42
      iris team remove eng ada@example.com --as telegram:42
      iris team list --as telegram:42
    """


@team_group.command("create")
@click.argument("name")
@AS_OPTION
@friendly
def team_create(name: str, actor: str | None) -> None:
    """Create team NAME, owned by the --as person (created when new).

    Example: iris team create eng --as telegram:42
    """
    from core.teams import manage

    with opened() as (_settings, store):
        click.echo(manage.create(store, resolve_user(store, actor, create=True), name))


@team_group.command("add")
@click.argument("team")
@click.argument("account")
@click.option("--role", default="member", type=click.Choice(["member", "admin", "owner"]))
@AS_OPTION
@friendly
def team_add(team: str, account: str, role: str, actor: str | None) -> None:
    """Add ACCOUNT (telegram:42, slack:T1/U9, an email address) to TEAM (admins only).

    Example: iris team add eng telegram:7 --as telegram:42
    """
    from core.teams import manage

    with opened() as (_settings, store):
        click.echo(manage.add(store, resolve_user(store, actor), team, account, role))


@team_group.command("remove")
@click.argument("team")
@click.argument("account")
@AS_OPTION
@friendly
def team_remove(team: str, account: str, actor: str | None) -> None:
    """Remove ACCOUNT from TEAM (admins; anyone may remove themselves).

    Example: iris team remove eng telegram:7 --as telegram:42
    """
    from core.teams import manage

    with opened() as (_settings, store):
        me = resolve_user(store, actor)
        who = None if manage.person(store, account) == me else account
        click.echo(manage.remove(store, me, team, who))


@team_group.command("role")
@click.argument("team")
@click.argument("account")
@click.argument("role", type=click.Choice(["member", "admin", "owner"]))
@AS_OPTION
@friendly
def team_role(team: str, account: str, role: str, actor: str | None) -> None:
    """Give ACCOUNT the ROLE in TEAM (admins; owners for owner changes).

    Example: iris team role eng telegram:7 admin --as telegram:42
    """
    from core.teams import manage

    with opened() as (_settings, store):
        click.echo(manage.set_role(store, resolve_user(store, actor), team, account, role))


@team_group.command("list")
@AS_OPTION
@friendly
def team_list(actor: str | None) -> None:
    """The --as person's teams with their members and roles.

    Example: iris team list --as telegram:42
    """
    from core.teams import manage

    with opened() as (_settings, store):
        click.echo(manage.listing(store, resolve_user(store, actor)))


commands = [team_group]
