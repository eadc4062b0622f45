"""``/memory``: what Iris remembers about you now, its archive, and restoring from it."""

from __future__ import annotations

from datetime import UTC, datetime

from core.commands import CommandContext, CommandResult, command
from core.commands.remember import numbered
from core.errors import IrisUsageError
from core.memory.book import Limits, MemoryBook
from core.memory.models import TARGETS, ArchivedEntry, MemoryEntry, Target, Usage, clip, summary
from core.memory.snapshot import shown

USAGE = ("Usage: /memory | /memory archive [words] | /memory restore ID | /memory pending | "
         "/memory approve N|all | /memory reject N|all")


def numbered_store(usage: dict[Target, Usage], stores: dict[Target, list[MemoryEntry]],
                   target: Target) -> str:
    """One store under its fill header, each entry numbered as /forget N takes it."""
    lines = [f"{number}. {shown(entry)}".replace("\n", "\n   ")
             for number, entry in numbered(stores) if entry.target == target]
    return "\n".join([usage[target].header(), *(lines or ["(empty)"])])


def hint(ctx: CommandContext) -> str:
    """How memory gets written here: by the user's commands, and by the model when it can."""
    commands = "/remember TEXT adds to your profile (/remember memory: TEXT to Iris' notes); " \
               "/forget TEXT or N removes an entry."
    if ctx.settings.model_uses_tools:
        return f"Iris saves what matters as you talk; {commands}"
    return (f"{commands} This model cannot save memory itself (it is offered no tools); a "
            "real model (IRIS_MODEL) also notes what matters on its own.")


def archive_lines(found: list[ArchivedEntry]) -> str:
    return "\n".join(
        f"{a.id} [{a.target}, {a.reason} "
        f"{datetime.fromtimestamp(a.archived_at, UTC):%Y-%m-%d}] {clip(a.content, 90)}"
        for a in found
    )


@command("memory", "show your memory; /memory archive [words]; /memory restore ID; "
         "/memory pending")
async def memory(ctx: CommandContext, args: str) -> CommandResult:
    from core.lanes import blocking

    words = args.split(maxsplit=1)
    verb = words[0].lower() if words else ""
    rest = words[1].strip() if len(words) > 1 else ""
    if verb in ("pending", "approve", "reject"):
        from core.commands.held import held_writes

        return await held_writes(ctx, "memory", verb, rest)
    return await blocking("store", ctx.user_id, _memory, ctx, verb, rest, what="/memory")


def _memory(ctx: CommandContext, verb: str, rest: str) -> CommandResult:
    """Showing, searching and restoring memory: store work, in the ``store`` lane."""
    repo, limits = ctx.store.memory, Limits.from_settings(ctx.settings)
    book = MemoryBook(ctx.store)
    if not verb:
        usage, stores = book.usage(ctx.user_id, limits), repo.snapshot(ctx.user_id)
        parts = [numbered_store(usage, stores, t) for t in TARGETS]
        archived = repo.count_archive(ctx.user_id)
        if archived:
            parts.append(f"{archived} archived entries: /memory archive [words]")
        if held := ctx.store.held_writes.pending(ctx.user_id, "memory"):
            parts.append(f"{len(held)} write(s) waiting for your confirmation: /memory pending")
        parts.append(hint(ctx))
        return CommandResult(reply="\n\n".join(parts))
    if verb == "archive":
        found = (
            repo.search_archive(ctx.user_id, rest, limit=10) if rest
            else repo.list_archive(ctx.user_id, limit=10)
        )
        if not found:
            empty = "Nothing archived matches." if rest else "The archive is empty."
            return CommandResult(reply=empty)
        return CommandResult(reply=archive_lines(found) + "\n\nRestore one with /memory restore ID")
    if verb == "restore" and rest:
        try:
            result = book.restore(ctx.user_id, rest, limits=limits, who=ctx.account)
        except IrisUsageError as exc:
            return CommandResult(reply=f"Not restored: {exc}.")
        return CommandResult(reply=f"Restored {rest}. {summary(result)}")
    return CommandResult(reply=USAGE)
