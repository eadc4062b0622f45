"""``iris memory|skills pending|approve|reject``: writes held for confirmation (``core.confirm``)
— made by the agent after it read untrusted content — listed and decided from the terminal."""

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
        from core.confirm import listing

        with opened() as (_, store):
            click.echo(listing(store, resolve_user(store, user_ref), kind))

    pending.help = (f"List {noun} writes waiting for confirmation: the agent made them after "
                    f"reading untrusted content.\n\nExample: iris {noun} pending --user alice")

    def decider(verb: str) -> click.Command:
        @click.argument("numbers", nargs=-1, required=True)
        @click.option("--user", "user_ref", help=USER_HELP)
        @friendly
        def decide(numbers: tuple[str, ...], user_ref: str | None) -> None:
            from core import confirm

            with opened() as (settings, store):
                user_id = resolve_user(store, user_ref)
                for number in confirm.numbers(store, user_id, kind, " ".join(numbers)):
                    if verb == "approve":
                        reply = asyncio.run(confirm.approve(store, settings, user_id, kind,
                                                            number, by=operator()))
                    else:
                        reply = confirm.reject(store, user_id, kind, number, by=operator())
                    click.echo(reply)

        decide.__doc__ = (
            f"{verb.capitalize()} held {noun} writes by number (or 'all').\n\n"
            f"Example: iris {noun} {verb} 3 --user alice"
        )
        return group.command(verb)(decide)

    decider("approve")
    decider("reject")
