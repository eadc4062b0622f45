"""``iris pairing …``: pending pairing codes from unknown Telegram/Slack accounts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from local_dev.clikit import friendly, opened, operator


def _when(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "-"


@click.group("pairing")
def pairing_group() -> None:
    """DM pairing: an unknown account that messages Iris gets an 8-character code (valid for
    an hour, at most 3 pending per platform); approving it lets that account in.

    \b
    Examples:
      iris pairing list
      iris pairing approve K7MX2QPA
      iris pairing approve telegram:42     (let an account in without a code)
      iris pairing revoke telegram:42      (withdraw access; data is kept)
    """


@pairing_group.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also approved, revoked and expired codes.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def pairing_list(show_all: bool, as_json: bool) -> None:
    """Pending pairing codes (oldest first).

    Example: iris pairing list --all
    """
    from core.identity.pairing import Pairing

    with opened() as (_, store):
        requests = Pairing(store).list(include_all=show_all)
        if as_json:
            click.echo(json.dumps([
                {"code": r.code, "account": r.account, "platform": r.platform,
                 "display_name": r.display_name, "status": r.status,
                 "created_at": r.created_at, "expires_at": r.expires_at,
                 "decided_by": r.decided_by}
                for r in requests
            ], indent=2))
            return
        if not requests:
            click.echo("no pending pairing codes" if not show_all else "no pairing codes")
        for r in requests:
            who = f"{r.display_name} ({r.account})" if r.display_name else r.account
            click.echo(f"{r.code}  {r.status:<8}  {who}  expires {_when(r.expires_at)}")


@pairing_group.command("approve")
@click.argument("code_or_account")
@friendly
def pairing_approve(code_or_account: str) -> None:
    """Approve a pairing code (the person is told), or let an account in directly.

    Five wrong codes within an hour lock approvals from this operator out for an hour.

    Example: iris pairing approve K7MX2QPA
    """
    from core.identity.pairing import Pairing

    with opened() as (_, store):
        pairing = Pairing(store)
        if ":" in code_or_account:
            user_id = pairing.approve_account(code_or_account, by=operator())
            click.echo(f"approved {code_or_account} (user {user_id})")
            return
        request = pairing.approve(code_or_account, by=operator())
        click.echo(f"approved {request.account} (user {request.user_id}); they will be told "
                   "on the next delivery sweep")


@pairing_group.command("revoke")
@click.argument("code_or_account")
@friendly
def pairing_revoke(code_or_account: str) -> None:
    """Cancel a pending code, or withdraw an account's access (its data is kept).

    Example: iris pairing revoke telegram:42
    """
    from core.identity.pairing import Pairing

    with opened() as (_, store):
        click.echo(Pairing(store).revoke(code_or_account, by=operator()))


@pairing_group.command("unlock")
@click.argument("account")
@friendly
def pairing_unlock(account: str) -> None:
    """Lift a lockout after failed code attempts (an account, or cli:<you> for yourself).

    Example: iris pairing unlock slack:T1/U9
    """
    from core.errors import NotFound
    with opened() as (_, store):
        if store.access.state(account) is None:
            raise NotFound(f"no account {account!r}")
        store.access.clear_failures(account)
        click.echo(f"{account} unlocked")


commands = [pairing_group]
