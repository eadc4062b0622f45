"""``/remember`` and ``/forget``: explicit memory with any model, through the memory tool's own
write path (bounded, scanned, compare-and-set; held while the session holds untrusted content)."""

from __future__ import annotations

import re

from core.asking.confirm import hold_memory, session_sources
from core.commands import CommandContext, CommandResult, command
from core.lanes import blocking
from core.memory.book import Limits, MemoryBook, MemoryBusy
from core.memory.models import TARGETS, MemoryEntry, MemoryOperation, Target, clip, summary
from core.memory.ops import Author, MemoryRefused, check_content

REMEMBER_USAGE = ("Usage: /remember TEXT (a fact about you, kept in your profile) or "
                  "/remember memory: TEXT (a note for Iris). /memory shows what is kept.")
FORGET_USAGE = ("Usage: /forget TEXT (the entry containing it) or /forget N (entry N as "
                "numbered by /memory). Forgotten entries go to the archive: /memory archive.")
NOTE_PREFIX = "memory:"
TEAM_RE = re.compile(r"^team(?:\s+(?P<name>[A-Za-z0-9][\w-]{0,39}))?\s*:", re.I)


def numbered(stores: dict[Target, list[MemoryEntry]]) -> list[tuple[int, MemoryEntry]]:
    """Every entry with the number /memory shows it under: MEMORY first, then USER PROFILE."""
    entries = [entry for target in TARGETS for entry in stores[target]]
    return list(enumerate(entries, 1))


def _write(ctx: CommandContext, operations: list[MemoryOperation]) -> str:
    """Apply ``operations`` as the user's own write, or hold them for confirmation when this
    session read untrusted content; the reply says which, or why nothing changed."""
    limits = Limits.from_settings(ctx.settings)
    sources = session_sources(ctx.store, ctx.user_id, ctx.session.id)
    try:
        if sources:  # what would be refused anyway is refused now, not held
            for op in operations:
                if op.content is not None:
                    check_content(op.content, op.target, limits.as_dict()[op.target])
            held = hold_memory(ctx.store, ctx.user_id, operations, provenance="user",
                               who=ctx.account, sources=sources, account=ctx.account,
                               session_id=ctx.session.id)
            return (f"Not saved yet: held as #{held.number}, because this session read "
                    f"untrusted content ({', '.join(sorted(sources))}), which may carry "
                    f"orders. /memory approve {held.number} saves it; /memory reject "
                    f"{held.number} drops it.")
        author = Author(provenance="user", who=ctx.account, session_id=ctx.session.id)
        result = MemoryBook(ctx.store).write(ctx.user_id, operations, limits=limits,
                                             author=author)
    except (MemoryRefused, MemoryBusy) as exc:
        return f"Nothing changed: {exc}"
    if not result.changed:
        return summary(result)
    return f"{summary(result)} Iris sees it from the next session (/new)."


def _team_note(ctx: CommandContext, name: str | None, text: str) -> str:
    """``/remember team[ NAME]: TEXT``: a note to the team, held for an admin unless the writer
    is one and this session read no untrusted content."""
    from core.errors import IrisUsageError
    from core.teams.notes import pick_team, write_note, written

    if not text.strip():
        return "Usage: /remember team: TEXT (or /remember team NAME: TEXT when in several teams)"
    from core.teams.acting import actor

    sources = session_sources(ctx.store, ctx.user_id, ctx.session.id)
    try:
        who = actor(ctx.store, ctx.user_id, ctx.account)  # in a group: the sender
        here = who.bound_here(ctx.store)
        team_id = pick_team(ctx.store, who.user_id, name or (here[0] if len(here) == 1 else None))
        result = write_note(ctx.store, who.user_id, team_id, text,
                            tainted_by=", ".join(sorted(sources)) or None)
        return written(result, ctx.store.teams.find(who.user_id, team_id).name)
    except IrisUsageError as exc:
        return f"Nothing changed: {exc}"


@command("remember", "keep a fact about you: /remember TEXT; a note for Iris: "
         "/remember memory: TEXT")
async def remember(ctx: CommandContext, args: str) -> CommandResult:
    text = args.strip()
    if team_note := TEAM_RE.match(text):
        reply = await blocking("store", ctx.user_id, _team_note, ctx, team_note["name"],
                               text[team_note.end():], what="a team note")
        return CommandResult(reply=reply)
    target: Target = "user"
    if text.lower().startswith(NOTE_PREFIX):
        text, target = text[len(NOTE_PREFIX):].strip(), "memory"
    if not text:
        return CommandResult(reply=REMEMBER_USAGE)
    operation = MemoryOperation(action="add", target=target, content=text)
    reply = await blocking("store", ctx.user_id, _write, ctx, [operation], what="/remember")
    return CommandResult(reply=reply)


@command("forget", "remove a memory entry: /forget TEXT or /forget N (as numbered by /memory)")
def forget(ctx: CommandContext, args: str) -> CommandResult:
    needle = args.strip().lstrip("#") if args.strip().lstrip("#").isdigit() else args.strip()
    if not needle:
        return CommandResult(reply=FORGET_USAGE)
    stores = ctx.store.memory.snapshot(ctx.user_id)
    if needle.isdigit():
        entries = dict(numbered(stores))
        entry = entries.get(int(needle))
        if entry is None:
            count = len(entries)
            return CommandResult(reply=f"There is no entry {needle}: your memory holds "
                                 f"{count} entr{'y' if count == 1 else 'ies'} (/memory).")
        target, old_text = entry.target, entry.content
    else:
        found = [t for t in TARGETS
                 if any(needle.lower() in e.content.lower() for e in stores[t])]
        if not found:
            return CommandResult(reply=f"Nothing in your memory contains {clip(needle)!r} "
                                 "(/memory lists it).")
        if len(found) > 1:
            return CommandResult(reply=f"{clip(needle)!r} is in both your profile and Iris' "
                                 "notes: use a longer text, or the entry's number from /memory.")
        target, old_text = found[0], needle
    operation = MemoryOperation(action="remove", target=target, old_text=old_text)
    return CommandResult(reply=_write(ctx, [operation]))
