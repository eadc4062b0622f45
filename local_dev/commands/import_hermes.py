"""``iris import-hermes``: bring a whole Hermes Agent home into Iris."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from core.errors import NotFound
from local_dev.clikit import USER_HELP, default_account, friendly, opened, resolve_user


class Progress:
    """One updating line on stderr per long step (messages, vectors), at most ~4 times a second."""

    def __init__(self) -> None:
        self.last = 0.0
        self.what = ""

    def __call__(self, what: str, done: int, total: int) -> None:
        now = time.monotonic()
        if what != self.what and self.what:
            click.echo("", err=True)
        if what == self.what and done < total and now - self.last < 0.25:
            return
        self.what, self.last = what, now
        share = f" ({done * 100 // total}%)" if total else ""
        click.echo(f"\r  {what}: {done:,}/{total:,}{share}", nl=False, err=True)
        if done >= total:
            click.echo("", err=True)
            self.what = ""


@click.command("import-hermes")
@click.argument("path", required=False, type=click.Path(path_type=Path), default="~/.hermes")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--dry-run", is_flag=True, help="Report what would be taken, with counts; change "
              "nothing.")
@click.option("--profile", help="Import profiles/NAME (a separate Hermes agent) into --user.")
@click.option("--all-profiles", is_flag=True, help="Also import every profile, each into its own "
              "user (http:hermes-<name>).")
@click.option("--embed", "embed_mode", type=click.Choice(["full", "fast", "none"]),
              default="fast", show_default=True,
              help="Meaning vectors for imported messages: full model, static (fast) or none.")
@click.option("--slack-team", help="Your Slack workspace id (T…), to map Slack accounts.")
@click.option("--no-model", is_flag=True, help="Do not set the user's model from config.yaml.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@friendly
def import_hermes_command(
    path: Path, user_ref: str | None, dry_run: bool, profile: str | None, all_profiles: bool,
    embed_mode: str, slack_team: str | None, no_model: bool, as_json: bool,
) -> None:
    """Import a Hermes home (default ~/.hermes): memories, SOUL.md (the persona), skills with
    their usage counts, the model, every session of state.db (read-only, safe while Hermes runs)
    with its Telegram/Slack accounts linked to the user, approved users, and cron jobs. Prints
    per kind what was taken, skipped and refused, and why. Secrets are never copied. Safe to run
    again: only what is new is taken; an interrupted run completes when rerun.

    \b
    Examples:
      iris import-hermes --dry-run --user telegram:42
      iris import-hermes ~/.hermes --user telegram:42 --all-profiles
    """
    from core.migrate.hermes import import_hermes

    with opened() as (settings, store):
        if dry_run:
            ref = (user_ref or default_account()).strip()
            try:
                user_id = store.users.resolve(ref)
            except NotFound:
                user_id = f"(new user for {ref})"
        else:
            user_id = resolve_user(store, user_ref, create=True)
        report = import_hermes(
            store, settings, user_id, path, dry_run=dry_run, set_model=not no_model,
            embed=embed_mode, slack_team=slack_team, profile=profile,
            all_profiles=all_profiles, progress=None if as_json else Progress(),
        )
        if as_json:
            click.echo(json.dumps(report.as_dict(), indent=2))
            return
        for line in report.lines():
            click.echo(line)
        sys.stdout.flush()


commands = [import_hermes_command]
