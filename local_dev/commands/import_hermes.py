"""``iris import-hermes``: bring a Hermes Agent home into one Iris user."""

from __future__ import annotations

import json
from pathlib import Path

import click

from local_dev.clikit import USER_HELP, friendly, opened, resolve_user


@click.command("import-hermes")
@click.argument("path", required=False, type=click.Path(path_type=Path), default="~/.hermes")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--dry-run", is_flag=True, help="Report what would be taken; change nothing.")
@click.option("--no-model", is_flag=True, help="Do not set the user's model from config.yaml.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@friendly
def import_hermes_command(
    path: Path, user_ref: str | None, dry_run: bool, no_model: bool, as_json: bool
) -> None:
    """Import a Hermes home (default ~/.hermes): memories/MEMORY.md and USER.md (each entry
    scanned; refused ones reported), skills/ (each skill all-or-nothing) and the model from
    config.yaml. Reports what it took and what it skipped; API keys are never copied.

    Example: iris import-hermes ~/.hermes --user telegram:42
    """
    from core.migrate.hermes import import_hermes

    with opened() as (settings, store):
        user_id = resolve_user(store, user_ref, create=True)
        report = import_hermes(
            store, settings, user_id, path, dry_run=dry_run, set_model=not no_model
        )
        if as_json:
            click.echo(json.dumps({
                "user_id": user_id, "home": str(report.home), "taken": report.taken,
                "skipped": report.skipped, "notes": report.notes, "model": report.model,
                "memory": [
                    {"target": m.target, "added": m.added, "duplicates": m.duplicates,
                     "refused": [{"text": t, "reason": r} for t, r in m.refused]}
                    for m in report.memory
                ],
                "skills": report.skills, "dry_run": dry_run,
            }, indent=2))
            return
        click.echo(("[dry run] " if dry_run else "") + f"importing into user {user_id}")
        for line in report.lines():
            click.echo(line)


commands = [import_hermes_command]
