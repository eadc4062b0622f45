"""``iris memory …``: show, edit, export, import, search and restore a user's memory."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from core.errors import IrisUsageError
from local_dev.clikit import USER_HELP, friendly, opened, resolve_user
from local_dev.held_cli import add_held_commands

if TYPE_CHECKING:
    from core.store.memory import Target

TARGET = click.Choice(["memory", "user"])


def _when(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M") if at else "-"


@click.group("memory")
def memory_group() -> None:
    """A user's two bounded memory stores (MEMORY: Iris' notes; USER: the user's profile) and
    the archive that keeps everything that no longer fits or was removed.

    \b
    Examples:
      iris memory show --user telegram:42
      iris memory edit --target user
      iris memory export --out ./memories
      iris memory import ~/.hermes/memories/MEMORY.md --user alice
      iris memory archive "postgres" --user alice
      iris memory restore arc_018c2f3a9b1e4d7a2c --user alice
    """


@memory_group.command("show")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--target", type=TARGET, help="Only this store.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (entries with provenance).")
@friendly
def memory_show(user_ref: str | None, target: Target | None, as_json: bool) -> None:
    """Print a user's memory as the model sees it at the start of a session.

    Example: iris memory show --user alice
    """
    from core.memory.book import Limits, MemoryBook
    from core.memory.snapshot import render_store

    with opened() as (settings, store):
        user_id = resolve_user(store, user_ref)
        limits = Limits.from_settings(settings)
        usage, stores = MemoryBook(store).usage(user_id, limits), store.memory.snapshot(user_id)
        targets: list[Target] = [target] if target else ["memory", "user"]
        if as_json:
            from functions.admin_api import _entry, _usage

            click.echo(json.dumps({
                "user_id": user_id,
                "stores": {t: {"usage": _usage(usage[t]), "entries": [_entry(e) for e in stores[t]]}
                           for t in targets},
                "archived": store.memory.count_archive(user_id),
            }, indent=2))
            return
        click.echo(f"# user {user_id}")
        for t in targets:
            click.echo(render_store(usage[t], stores[t]))
            click.echo()
        archived = store.memory.count_archive(user_id)
        if archived:
            click.echo(f"({archived} archived entries: iris memory archive --user {user_id})")


@memory_group.command("archive")
@click.argument("query", required=False)
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@click.option("--all", "include_restored", is_flag=True, help="Include restored entries.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def memory_archive(
    query: str | None, user_ref: str | None, limit: int, include_restored: bool, as_json: bool
) -> None:
    """List archived entries (overflowed, replaced, removed), newest first, or search them.

    Example: iris memory archive "deploy" --user alice
    """
    from functions.admin_api import _archived

    with opened() as (_, store):
        user_id = resolve_user(store, user_ref)
        found = (
            store.memory.search_archive(user_id, query, limit=limit) if query
            else store.memory.list_archive(
                user_id, limit=limit, include_restored=include_restored
            )
        )
        if as_json:
            click.echo(json.dumps([_archived(a) for a in found], indent=2))
            return
        if not found:
            click.echo("nothing archived matches" if query else "the archive is empty")
        for item in found:
            restored = f", restored as {item.restored_as}" if item.restored_at else ""
            click.echo(
                f"{item.id}  [{item.target}, {item.reason} {_when(item.archived_at)} by "
                f"{item.archived_by or '-'}{restored}]\n    {item.content}"
            )


@memory_group.command("restore")
@click.argument("archive_ids", nargs=-1, required=True)
@click.option("--user", "user_ref", help=USER_HELP)
@friendly
def memory_restore(archive_ids: tuple[str, ...], user_ref: str | None) -> None:
    """Put archived entries back in their store (if it is full, its least recently used
    entries are archived in turn).

    Example: iris memory restore arc_018c2f3a9b1e4d7a2c --user alice
    """
    from core.memory.book import Limits, MemoryBook
    from core.memory.models import summary

    with opened() as (settings, store):
        user_id = resolve_user(store, user_ref)
        for archive_id in archive_ids:
            result = MemoryBook(store).restore(
                user_id, archive_id, limits=Limits.from_settings(settings), who="cli"
            )
            click.echo(f"restored {archive_id}. {summary(result)}")


@memory_group.command("export")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--target", type=TARGET, default="memory", show_default=True,
              help="Which store to print (without --out).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write MEMORY.md and USER.md into this directory instead of printing.")
@click.option("--force", is_flag=True, help="Overwrite existing files in --out.")
@friendly
def memory_export(
    user_ref: str | None, target: Target, out_dir: Path | None, force: bool
) -> None:
    """Export in Hermes' format: one entry after another, separated by a line holding §.

    Example: iris memory export --user alice --out ./memories
    """
    from core.memory.transfer import render_entries

    with opened() as (_, store):
        user_id = resolve_user(store, user_ref)
        stores = store.memory.snapshot(user_id)
        if out_dir is None:
            click.echo(render_entries(stores[target]), nl=False)
            return
        files = {"MEMORY.md": stores["memory"], "USER.md": stores["user"]}
        clash = [name for name in files if (out_dir / name).exists()]
        if clash and not force:
            raise IrisUsageError(f"{out_dir}: {', '.join(clash)} exists; use --force to overwrite")
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, entries in files.items():
            (out_dir / name).write_text(render_entries(entries), encoding="utf-8")
            click.echo(f"wrote {out_dir / name} ({len(entries)} entries)")


@memory_group.command("import")
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=True, path_type=Path))
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--target", type=TARGET,
              help="Store to import into [default: 'user' for USER.md, else 'memory'].")
@friendly
def memory_import(
    files: tuple[Path, ...], user_ref: str | None, target: Target | None
) -> None:
    """Import MEMORY.md / USER.md files (Hermes' format), entry by entry. Every entry is
    scanned; refused ones are reported and the rest imported. A directory imports the
    MEMORY.md and USER.md inside it.

    Example: iris memory import ~/.hermes/memories --user telegram:42
    """
    from core.memory.book import Limits, MemoryBook
    from core.memory.transfer import (
        import_entries,
        parse_entries,
        read_memory_file,
        target_for_filename,
    )

    paths: list[Path] = []
    for path in files:
        if path.is_dir():
            found = [path / n for n in ("MEMORY.md", "USER.md") if (path / n).is_file()]
            if not found:
                raise IrisUsageError(f"{path}: holds neither MEMORY.md nor USER.md")
            paths += found
        else:
            paths.append(path)
    texts = {path: parse_entries(read_memory_file(path)) for path in paths}
    with opened() as (settings, store):
        user_id = resolve_user(store, user_ref, create=True)
        for path, entries in texts.items():
            chosen: Target = target or target_for_filename(path.name)
            report = import_entries(
                MemoryBook(store), user_id, chosen, entries,
                limits=Limits.from_settings(settings), who="cli import",
            )
            click.echo(f"{path}:")
            for line in report.lines():
                click.echo(f"  {line}")


@memory_group.command("edit")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--target", type=TARGET, default="memory", show_default=True)
@friendly
def memory_edit(user_ref: str | None, target: Target) -> None:
    """Edit a store in $EDITOR (entries separated by a line holding §). Deleted entries go to
    the archive; new ones are scanned like any write. If memory changed while you edited,
    nothing is saved and your text is kept in a file.

    Example: EDITOR=nano iris memory edit --target user --user alice
    """
    from core.memory.book import Limits, MemoryBook
    from core.memory.models import MemoryOperation
    from core.memory.ops import Author, MemoryRefused
    from core.memory.transfer import parse_entries, render_entries

    with opened() as (settings, store):
        user_id = resolve_user(store, user_ref)
        versions = store.memory.versions(user_id)
        before = store.memory.entries(user_id, target)
        original = render_entries(before)
        edited = click.edit(original, extension=".md", require_save=True)
        if edited is None or parse_entries(edited) == [e.content for e in before]:
            click.echo("no changes")
            return
        after = parse_entries(edited)
        old_texts = [e.content for e in before]
        ops = [
            MemoryOperation(action="remove", target=target, old_text=text)
            for text in old_texts if text not in after
        ] + [
            MemoryOperation(action="add", target=target, content=text)
            for text in dict.fromkeys(after) if text not in old_texts
        ]
        if not ops:
            click.echo("only the order changed; memory keeps its own order (no changes)")
            return
        try:
            result = MemoryBook(store).write(
                user_id, ops, limits=Limits.from_settings(settings),
                author=Author(provenance="user", who="cli edit"), expect=versions,
            )
        except MemoryRefused as exc:
            keep = settings.home / f"memory-edit-{target}-{int(datetime.now(UTC).timestamp())}.md"
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_text(edited, encoding="utf-8")
            raise IrisUsageError(f"{exc}. Your edited text is saved in {keep}") from None
        click.echo(" ".join(result.notes))


commands = [memory_group]


add_held_commands(memory_group, "memory")
