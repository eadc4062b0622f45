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
    """Teams: shared notes and skills among people whose own memory stays private.

    \b
    Examples:
      iris team create eng --as telegram:42
      iris team add eng slack:T1/U9 --role admin --as telegram:42
      iris team role eng slack:T1/U9 member --as telegram:42
      iris team remove eng ada@example.com --as telegram:42
      iris team list --as telegram:42
      iris team skills eng --as telegram:42
      iris team approve eng pg-backup --as telegram:42
      iris team rollback eng pg-backup 1 --as telegram:42
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


@team_group.command("skills")
@click.argument("team")
@AS_OPTION
@friendly
def team_skills(team: str, actor: str | None) -> None:
    """TEAM's skills waiting for an admin, each finding at file:line (admins only).

    Example: iris team skills eng --as telegram:42
    """
    from core.teams import skills

    with opened() as (_settings, store):
        click.echo(skills.review(store, resolve_user(store, actor), team))


@team_group.command("approve")
@click.argument("team")
@click.argument("skill")
@click.argument("version", required=False)
@click.option("--reject", is_flag=True, help="Reject the version instead.")
@AS_OPTION
@friendly
def team_approve(
    team: str, skill: str, version: str | None, reject: bool, actor: str | None
) -> None:
    """Offer SKILL (its waiting VERSION, default the newest) to every member of TEAM.

    Example: iris team approve eng pg-backup 2 --as telegram:42
    """
    from core.teams import skills

    with opened() as (_settings, store):
        me = resolve_user(store, actor)
        click.echo(skills.decide(store, me, team, skill, not reject, version))


@team_group.command("rollback")
@click.argument("team")
@click.argument("skill")
@click.argument("version", required=False)
@AS_OPTION
@friendly
def team_rollback(team: str, skill: str, version: str | None, actor: str | None) -> None:
    """Offer an earlier approved VERSION of SKILL again (default: the one before).

    Example: iris team rollback eng pg-backup 1 --as telegram:42
    """
    from core.teams import skills

    with opened() as (_settings, store):
        click.echo(skills.rollback(store, resolve_user(store, actor), team, skill, version))


commands = [team_group]
