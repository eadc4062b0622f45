"""``iris skills …``: list, show, search, validate, import (and review what it quarantined),
export, roll back and curate skills."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from core.errors import IrisUsageError, NotFound
from core.skills.index import usage_line
from local_dev.clikit import default_account, friendly, settings_or_exit
from local_dev.held_cli import add_held_commands

USER_HELP = "User id or account (telegram:42, http:alice) [default: http:$USER, as `iris chat`]."


@click.group("skills")
def skills_group() -> None:
    """Skills: procedures Iris loads when a task matches, and writes and improves itself.

    \b
    Examples:
      iris skills list
      iris skills search "deploy to modal"
      iris skills import ./my-skills --user alice
      iris skills rollback pg-backup
    """


@contextmanager
def _library() -> Iterator[Any]:
    from core.skills.library import SkillLibrary
    from core.store import open_store

    settings = settings_or_exit()
    store = open_store(settings)
    try:
        yield SkillLibrary(store, settings)
    finally:
        store.close()


def _user(library: Any, user: str | None, *, create: bool = False) -> str:
    """The user id for ``--user`` (or the default account). With ``create`` an account that has
    no user yet gets one; otherwise a missing default user is "" (only bundled skills)."""
    users = library.store.users
    if user:
        try:
            return users.resolve(user)
        except NotFound:
            if create and ":" in user:  # an account that has not written yet, e.g. telegram:42
                return users.for_account(user)
            raise
    try:
        return users.resolve(default_account())
    except NotFound:
        return users.for_account(default_account()) if create else ""


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M") if ts else "never"


def _entry_dict(entry: Any) -> dict[str, Any]:
    return {
        "name": entry.name, "description": entry.description, "category": entry.category,
        "tags": list(entry.tags), "kind": entry.kind, "origin": entry.origin,
        "provenance": entry.provenance, "version": entry.version, "status": entry.status,
        "files": list(entry.files), "source": entry.source,
        "usage": {"shown": entry.usage.shown, "used": entry.usage.used,
                  "patched": entry.usage.patched, "last_used_at": entry.usage.last_used_at,
                  "succeeded": entry.usage.succeeded, "failed": entry.usage.failed,
                  "failing": entry.usage.failing},
    }


@skills_group.command("list")
@click.option("--user", help=USER_HELP)
@click.option("--all", "show_all", is_flag=True, help="Include archived skills.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def skills_list(user: str | None, show_all: bool, as_json: bool) -> None:
    """List a user's skills: their own and the bundled ones.

    Example: iris skills list --user telegram:4242
    """
    with _library() as library:
        entries = library.entries(_user(library, user), include_archived=show_all)
    if as_json:
        click.echo(json.dumps([_entry_dict(e) for e in entries], indent=2))
        return
    for e in entries:
        version = "bundled" if e.bundled else f"v{e.version} {e.kind}"
        status = "" if e.status == "active" else f" [{e.status}]"
        click.echo(f"{e.name}  ({version}; {usage_line(e.usage)}){status}")
        click.echo(f"    {' '.join(e.description.split())[:150]}")
    click.echo(f"{len(entries)} skills")


@skills_group.command("show")
@click.argument("name")
@click.option("--user", help=USER_HELP)
@click.option("--version", "version", type=int, help="Show this version (default: current).")
@click.option("--file", "file_path", help="Print one file of the skill instead.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def skills_show(name: str, user: str | None, version: int | None, file_path: str | None,
                as_json: bool) -> None:
    """Show a skill: SKILL.md, files, versions and usage.

    Example: iris skills show pg-backup --version 2
    """
    with _library() as library:
        user_id = _user(library, user)
        skill = library.snapshot(user_id, name, version)
        if file_path:
            sys.stdout.buffer.write(skill.data(file_path))
            return
        versions = library.versions(user_id, name) if user_id else []
        text = skill.text()
    entry = skill.entry
    if as_json:
        body = _entry_dict(entry) | {"skill_md": text, "versions": [
            {"version": v.version, "provenance": v.provenance, "action": v.action,
             "note": v.note, "archived": v.archived, "created_at": v.created_at}
            for v in versions]}
        click.echo(json.dumps(body, indent=2))
        return
    click.echo(f"# {entry.name} — {'bundled' if entry.bundled else entry.kind}")
    click.echo(f"status {entry.status}; {usage_line(entry.usage)}, patched "
               f"{entry.usage.patched}×, last used {_when(entry.usage.last_used_at)}")
    for path in skill.paths:
        if path != "SKILL.md":
            click.echo(f"file: {path} ({skill.sizes.get(path, 0)} bytes)")
    for v in versions:
        mark = "*" if v.version == entry.version else " "
        note = f" — {v.note}" if v.note else ""
        click.echo(f"{mark} v{v.version} {_when(v.created_at)} {v.action} by {v.provenance}"
                   f"{' (archived)' if v.archived else ''}{note}")
    click.echo("")
    click.echo(text)


@skills_group.command("search")
@click.argument("text")
@click.option("--user", help=USER_HELP)
@click.option("--limit", type=click.IntRange(min=1), help="Show at most K skills.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def skills_search(text: str, user: str | None, limit: int | None, as_json: bool) -> None:
    """The skills the prompt's skill index would list for a conversation starting with TEXT,
    in rank order.

    Example: iris skills search "remind me every monday" --limit 3
    """
    from core.skills.index import index_for

    with _library() as library:
        view = index_for(library, _user(library, user), text)
    shown = view.shown[:limit] if limit else view.shown
    if as_json:
        click.echo(json.dumps({
            "query": text, "total": view.total, "listed": len(view.shown),
            "index_tokens": view.tokens,
            "skills": [{"rank": i, "name": r.entry.name, "score": round(r.score, 4),
                        "kind": r.entry.kind, "description": r.entry.description}
                       for i, r in enumerate(shown, 1)],
        }, indent=2))
        return
    for i, r in enumerate(shown, 1):
        click.echo(f"{i:>3}. {r.entry.name}  ({r.score:.2f})  "
                   f"{' '.join(r.entry.description.split())[:100]}")
    click.echo(f"The index lists {len(view.shown)} of {view.total} skills "
               f"(~{view.tokens} tokens).")


@skills_group.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def skills_validate(paths: tuple[Path, ...], as_json: bool) -> None:
    """Check skills strictly against the Agent Skills specification (agentskills.io).

    PATH is a skill directory, a SKILL.md, or a directory holding skills at any depth. Exits 1
    when any skill violates the standard.

    Example: iris skills validate ./skills
    """
    from core.skills.format import SKILL_FILE, find_skill_dirs
    from core.skills.validate import validate_paths

    violations = validate_paths(list(paths))
    checked = sum(
        len(find_skill_dirs(p)) if p.is_dir() else int(p.name == SKILL_FILE) for p in paths
    )
    if as_json:
        click.echo(json.dumps({
            "checked": checked, "valid": not violations,
            "violations": [{"path": v.path, "rule": v.rule, "message": v.message}
                           for v in violations],
        }, indent=2))
    else:
        for v in violations:
            click.echo(f"{v.path}: {v.rule}: {v.message}")
        bad = len({v.path for v in violations})
        click.echo(f"{checked} skill(s) checked: " + (
            "all conform" if not violations else f"{len(violations)} violation(s) in {bad} "
            "file(s)"))
    sys.exit(1 if violations else 0)


@skills_group.command("import")
@click.argument("source")
@click.option("--user", help=USER_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def skills_import(source: str, user: str | None, as_json: bool) -> None:
    """Import skills from a directory (one skill, or many at any depth), a .zip / .tar.gz
    archive, or a git URL. Each skill is imported whole or not at all. A skill the safety scan
    has findings about is quarantined: stored, but invisible to Iris until you approve it
    (iris skills pending, review, approve, reject). Only jailbreak kits and scripts that send
    your environment or credentials out are refused. Exits 1 when any was refused.

    \b
    Examples:
      iris skills import ./skills/pg-backup
      iris skills import team-skills.zip --user telegram:4242
      iris skills import https://github.com/ORG/skills.git
    """
    from core.lanes import blocking_sync
    from core.skills.importer import import_skills

    with _library() as library:
        owner = _user(library, user, create=True)
        report = blocking_sync("skills", owner, import_skills, library, owner, source,
                               what="the import", timeout=library.settings.skill_import_timeout)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        _print_report(report)
    sys.exit(1 if report.refused else 0)


def _print_report(report: Any) -> None:
    from core.skills.findings import summary

    for item in report.items:
        label = item.name or item.path
        if item.status == "refused":
            click.echo(f"refused      {label}: " + "; ".join(item.reasons))
            continue
        if item.status == "quarantined":
            click.echo(f"quarantined  {label}: {summary(item.findings)} "
                       f"(iris skills review {label})")
        else:
            state = "loaded     " if item.status == "loaded" else "same       "
            click.echo(f"{state}  {label} (version {item.version})")
        for warning in item.warnings:
            click.echo(f"  warning: {warning}")
    for entry, why in report.left_out.items():
        click.echo(f"skipped      {entry}: {why}")
    held = len(report.quarantined)
    hint = " (invisible to Iris until you approve: iris skills pending)" if held else ""
    click.echo(f"{len(report.loaded)} loaded, {len(report.warned)} with warnings, {held} "
               f"quarantined{hint}, {len(report.refused)} refused")


@skills_group.command("review")
@click.argument("name")
@click.option("--user", help=USER_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def skills_review(name: str, user: str | None, as_json: bool) -> None:
    """Show why an imported skill is in quarantine: each finding with its file and line.

    Example: iris skills review google-meet
    """
    from core.skills import quarantine

    with _library() as library:
        item = quarantine.get(library, _user(library, user), name)
        if as_json:
            click.echo(json.dumps({"name": item.name, "source": item.source,
                                   "path": item.path, "files": sorted(item.files),
                                   "findings": item.findings, "warnings": item.warnings},
                                  indent=2))
            return
        click.echo(quarantine.review(library, item))


@skills_group.command("export")
@click.argument("names", nargs=-1)
@click.option("--user", help=USER_HELP)
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="A directory, or a file ending in .zip or .tar.gz.")
@friendly
def skills_export(names: tuple[str, ...], user: str | None, out: Path) -> None:
    """Write skills (default: all of the user's own) as skill directories, a .zip or a .tar.gz.

    Example: iris skills export pg-backup --out backup.zip
    """
    from core.skills.export import export_skills

    with _library() as library:
        written = export_skills(library, _user(library, user), list(names), out)
    click.echo(f"exported {len(written)} skill(s) to {out}: {', '.join(written)}")


@skills_group.command("rollback")
@click.argument("name")
@click.argument("version", type=int, required=False)
@click.option("--user", help=USER_HELP)
@friendly
def skills_rollback(name: str, version: int | None, user: str | None) -> None:
    """Restore an earlier version of a skill (default: the one before the current), as a new
    version; also restores an archived skill.

    Example: iris skills rollback pg-backup 2
    """
    with _library() as library:
        user_id = _user(library, user)
        if not user_id:
            raise NotFound(f"no user {default_account()!r}; pass --user")
        written = library.rollback(user_id, name, version)
    if written.version is None:
        raise IrisUsageError(f"{name} already holds that content; nothing changed")
    click.echo(f"{name}: version {written.version} restores "
               f"{version if version is not None else 'the earlier content'}")


@skills_group.command("curate")
@click.option("--user", help="Curate only this user [default: every user].")
@click.option("--dry-run", is_flag=True, help="Say what would change, change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def skills_curate(user: str | None, dry_run: bool, as_json: bool) -> None:
    """Mark skills unused for 30 days stale and archive them after 90 (settings
    skills_stale_days, skills_archive_days), and list skills that keep preceding failed
    turns. Nothing is deleted.

    Example: iris skills curate --dry-run
    """
    from core.skills.curate import curate, failing

    with _library() as library:
        users = [library.store.users.resolve(user)] if user else \
            library.catalog.users_with_skills()
        changes = curate(library, users, dry_run=dry_run)
        flagged = [(u, e) for u in users for e in failing(library, u)]
    if as_json:
        click.echo(json.dumps({"changes": [c.as_dict() for c in changes], "failing": [
            {"user_id": u, "name": e.name, "failed": e.usage.failed,
             "succeeded": e.usage.succeeded} for u, e in flagged]}, indent=2))
        return
    for c in changes:
        click.echo(f"{c.user_id} {c.name}: {c.before} -> {c.after} "
                   f"(unused for {c.idle_days:.0f} days)")
    for u, e in flagged:
        click.echo(f"{u} {e.name}: keeps preceding failures ({e.usage.failed} went wrong, "
                   f"{e.usage.succeeded} well): ranked lower until fixed; iris skills show "
                   f"{e.name}")
    click.echo(f"{len(changes)} change(s){' (dry run)' if dry_run else ''}, "
               f"{len(flagged)} failing skill(s)")


commands = [skills_group]


add_held_commands(skills_group, "skill")
