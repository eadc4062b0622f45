"""``iris memory|skills pending|approve|reject``: writes held for confirmation
(``core.asking.confirm``) — made by the agent after it read untrusted content — listed and decided
from the terminal."""

from __future__ import annotations

import asyncio

import click

from local_dev.clikit import friendly, opened, operator, resolve_user

USER_HELP = "User id, account (telegram:42) or API user name (default: you)."


def add_held_commands(group: click.Group, kind: str) -> None:
    noun = "memory" if kind == "memory" else "skills"

    @group.command("pending")
    @click.option("--user", "user_ref", help=USER_HELP)
    @friendly
    def pending(user_ref: str | None) -> None:
        from core.asking.confirm import listing

        with opened() as (_, store):
            click.echo(listing(store, resolve_user(store, user_ref), kind))

    pending.help = (f"List {noun} writes waiting for confirmation: the agent made them after "
                    "reading untrusted content" + (
                        "; and imported skills in quarantine (safety findings: iris skills "
                        "review NAME)" if kind == "skill" else "")
                    + f".\n\nExample: iris {noun} pending --user alice")

    def decider(verb: str) -> click.Command:
        @click.argument("items", nargs=-1)
        @click.option("--all", "every", is_flag=True,
                      help="Every pending one" + (" (held writes and quarantined imports)."
                                                  if kind == "skill" else "."))
        @click.option("--user", "user_ref", help=USER_HELP)
        @friendly
        def decide(items: tuple[str, ...], every: bool, user_ref: str | None) -> None:
            from core.asking import confirm
            from core.errors import IrisUsageError

            if every == bool(items):
                raise IrisUsageError("give numbers" + (" or names" if kind == "skill" else "")
                                     + " (see pending), or --all")
            with opened() as (settings, store):
                user_id = resolve_user(store, user_ref)
                arg = "all" if every else " ".join(items)
                chosen, names = confirm.choices(store, user_id, kind, arg)
                if every and not chosen and not names:
                    click.echo(confirm.listing(store, user_id, kind))
                for number in chosen:
                    if verb == "approve":
                        reply = asyncio.run(confirm.approve(store, settings, user_id, kind,
                                                            number, by=operator()))
                    else:
                        reply = confirm.reject(store, user_id, kind, number, by=operator())
                    click.echo(reply)
                for name in names:
                    click.echo(asyncio.run(confirm.decide_quarantined(
                        store, settings, user_id, verb, name, by=operator())))

        what = "held writes by number" + (
            " and quarantined imports by name" if kind == "skill" else "")
        example = f"iris {noun} {verb} 3" + (" google-meet" if kind == "skill" else "")
        decide.__doc__ = (f"{verb.capitalize()} {what} (or --all).\n\nExample: {example} "
                          "--user alice")
        return group.command(verb)(decide)

    decider("approve")
    decider("reject")
