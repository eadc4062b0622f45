"""``iris dashboard …``: sign-in links to the web dashboard, its sessions, revoking them."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from local_dev.clikit import USER_HELP, friendly, opened, operator, resolve_user


def _when(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "-"


@click.group("dashboard")
def dashboard_group() -> None:
    """The web dashboard at /ui/: one-time sign-in links and the sessions they opened.

    \b
    Examples:
      iris dashboard link                 (an owner link: system pages too)
      iris dashboard link --user telegram:42
      iris dashboard sessions
      iris dashboard revoke dsh_0190ab…
    """


@dashboard_group.command("link")
@click.option("--user", "user_ref", default=None,
              help=f"Sign in as this user (no owner pages unless they are an owner). {USER_HELP}")
@click.option("--base-url", default=None,
              help="Address of the Iris web app [default: IRIS_PUBLIC_URL, else iris dev's].")
@friendly
def dashboard_link(user_ref: str | None, base_url: str | None) -> None:
    """Print a one-time sign-in link (valid 10 minutes). Without --user it is an owner link,
    signed in as the first of owner_accounts (or, with none, the account `iris chat` uses:
    http:$USER).

    Example: iris dashboard link --user alice
    """
    from core.dashboard.signin import issue_link

    with opened() as (settings, store):
        if user_ref is None:  # the owner: their own account when one is configured
            ref = settings.owner_accounts[0] if settings.owner_accounts else None
            user_id = resolve_user(store, ref, create=True)
        else:
            user_id = resolve_user(store, user_ref)
        is_owner = user_ref is None or store.users.get(user_id).is_owner
        link = issue_link(store, user_id, is_owner=is_owner, issued_by=operator(),
                          base_url=base_url or settings.public_url)
        click.echo(link.url)
        click.echo(f"valid once, until {_when(link.expires_at)}; user {user_id}"
                   f"{' (owner)' if is_owner else ''}", err=True)


@dashboard_group.command("sessions")
@click.option("--user", "user_ref", default=None, help="Only this user's sessions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def dashboard_sessions(user_ref: str | None, as_json: bool) -> None:
    """Signed-in dashboard sessions that are still live.

    Example: iris dashboard sessions --json
    """
    from core.dashboard.signin import sessions

    with opened() as (_, store):
        user_id = resolve_user(store, user_ref) if user_ref else None
        found = sessions(store, user_id)
        if as_json:
            click.echo(json.dumps([
                {"id": s.id, "user_id": s.user_id, "owner": s.is_owner,
                 "created_at": s.created_at, "last_seen_at": s.last_seen_at,
                 "expires_at": s.expires_at, "user_agent": s.user_agent} for s in found
            ], indent=2))
            return
        if not found:
            click.echo("No live dashboard sessions.")
        for s in found:
            click.echo(f"{s.id}  {s.user_id}{' owner' if s.is_owner else ''}  signed in "
                       f"{_when(s.created_at)}, last seen {_when(s.last_seen_at)}  "
                       f"{s.user_agent or ''}".rstrip())


@dashboard_group.command("revoke")
@click.argument("session_ids", nargs=-1)
@click.option("--user", "user_ref", default=None, help="Revoke every session of this user.")
@friendly
def dashboard_revoke(session_ids: tuple[str, ...], user_ref: str | None) -> None:
    """End dashboard sessions at once (the browser is signed out on its next request).

    Example: iris dashboard revoke --user telegram:42
    """
    from core.dashboard.signin import revoke, revoke_all
    from core.errors import IrisUsageError, NotFound

    if not session_ids and not user_ref:
        raise IrisUsageError("give session ids (see `iris dashboard sessions`) or --user")
    with opened() as (_, store):
        if user_ref:
            count = revoke_all(store, resolve_user(store, user_ref))
            click.echo(f"revoked {count} session{'' if count == 1 else 's'}")
        missing = [sid for sid in session_ids if not revoke(store, sid)]
        for sid in session_ids:
            if sid not in missing:
                click.echo(f"revoked {sid}")
        if missing:
            raise NotFound(f"no live session {', '.join(missing)}")


commands = [dashboard_group]
