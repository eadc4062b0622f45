"""Writes to memory and skills held for the user's confirmation.

Memory and skills reach every future prompt. A turn whose context holds content from outside
(a web page, a file, command output, an MCP result: ``ToolContext.tainted_by``) may be carrying
instructions planted there, and a write made in it could plant them for good. Such writes are
not applied: they are stored as held write #N with what they would do and why they were held,
and the user approves or rejects them (``/memory pending``, ``/skills pending``, their
``approve``/``reject`` forms, and the same in the CLI). Approval replays the write through the
ordinary path, scanned and compare-and-set like any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.errors import IrisUsageError
from core.lanes import Lane, blocking
from core.memory.models import MemoryOperation, clip

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.toolkit import ToolContext
    from core.store import Store
    from core.store.held_writes import HeldWrite

KINDS = ("memory", "skill")


def _sources(ctx: ToolContext) -> str:
    return ", ".join(sorted(ctx.tainted_by))


def reason_for(sources: set[str]) -> str:
    return (f"written after reading untrusted content ({', '.join(sorted(sources))}), which may "
            "carry orders")


def held_reason(ctx: ToolContext) -> str:
    return reason_for(ctx.tainted_by)


def session_sources(store: Store, user_id: str, session_id: str) -> set[str]:
    """The sources of untrusted content anywhere in a session's stored messages (tool results,
    an approved command's output): what a write made in that session may have been told."""
    from core.security.untrusted import untrusted_sources

    found: set[str] = set()
    for stored in store.messages.for_session(user_id, session_id):
        if stored.message.role != "system" and stored.message.content:
            found |= untrusted_sources(stored.message.content)
    return found


def _describe_memory(operations: list[MemoryOperation]) -> str:
    parts = []
    for op in operations:
        if op.action == "add":
            parts.append(f"add to {op.target}: {clip(op.content or '', 90)!r}")
        elif op.action == "replace":
            parts.append(f"replace {clip(op.old_text or '', 40)!r} in {op.target} with "
                         f"{clip(op.content or '', 70)!r}")
        else:
            parts.append(f"remove {clip(op.old_text or '', 60)!r} from {op.target}")
    return "; ".join(parts)


def _describe_skill(change: dict[str, Any]) -> str:
    action, name = change["action"], change["name"]
    if action in ("create", "edit"):
        return f"{action} skill {name!r}: {clip(change.get('content') or '', 90)!r}"
    if action == "patch":
        return (f"patch skill {name!r}: {clip(change.get('old_string') or '', 40)!r} → "
                f"{clip(change.get('new_string') or '', 60)!r}")
    if action in ("write_file", "remove_file"):
        return f"{action.replace('_', ' ')} {change.get('file_path')!r} in skill {name!r}"
    return f"{action} skill {name!r}"


def _told(ctx: ToolContext, held: HeldWrite, noun: str) -> str:
    return (
        f"Not saved yet: held as #{held.number} for the user's confirmation, because this turn "
        f"read untrusted content ({_sources(ctx)}). Tell the user what you wanted to save and "
        f"that they can send /{noun} approve {held.number} (or /{noun} reject {held.number}). "
        "Do not try to save it another way."
    )


def hold_memory(store: Store, user_id: str, operations: list[MemoryOperation], *,
                provenance: str, who: str | None, sources: set[str], account: str,
                session_id: str | None) -> HeldWrite:
    """Keep a memory write as held write #N until the user approves or rejects it."""
    return store.held_writes.hold(
        user_id, kind="memory",
        payload={"operations": [op.model_dump() for op in operations], "who": who},
        summary=_describe_memory(operations), reason=reason_for(sources),
        provenance=provenance, requested_by=account, session_id=session_id,
    )


def hold_memory_write(ctx: ToolContext, operations: list[MemoryOperation], provenance: str,
                      who: str | None) -> str:
    held = hold_memory(ctx.store, ctx.user_id, operations, provenance=provenance, who=who,
                       sources=ctx.tainted_by, account=ctx.account, session_id=ctx.session_id)
    return _told(ctx, held, "memory")


def hold_skill_write(ctx: ToolContext, change: dict[str, Any]) -> str:
    held = ctx.store.held_writes.hold(
        ctx.user_id, kind="skill", payload={"change": change, "note": ctx.review_note},
        summary=_describe_skill(change), reason=held_reason(ctx), provenance="agent",
        requested_by=ctx.account, session_id=ctx.session_id,
    )
    return _told(ctx, held, "skills")


def listing(store: Store, user_id: str, kind: str) -> str:
    """Held writes of ``kind`` by number; for skills, quarantined imports by name too."""
    pending = store.held_writes.pending(user_id, kind)
    noun = "memory" if kind == "memory" else "skills"
    quarantined = store.skill_quarantine.list(user_id) if kind == "skill" else []
    if not pending and not quarantined:
        return f"No {'memory' if kind == 'memory' else 'skill'} writes are waiting for you."
    lines = []
    if pending:
        lines.append(f"Waiting for your confirmation ({noun}):")
        lines += [f"#{h.number}: {h.summary} — {h.reason}" for h in pending]
        lines.append(f"/{noun} approve N (or all) saves it; /{noun} reject N (or all) drops it.")
    if quarantined:
        from core.skills.findings import FileFinding, summary

        lines.append("Imported skills in quarantine (the model cannot see them until you "
                     "approve one):")
        for item in quarantined:
            found = summary([FileFinding.from_dict(f) for f in item.findings])
            lines.append(f"{item.name}: {found} — from {item.source}")
        lines.append("/skills review NAME shows each finding with its line; /skills approve "
                     "NAME makes it usable; /skills reject NAME drops it.")
    return "\n".join(lines)


def choices(store: Store, user_id: str, kind: str, arg: str) -> tuple[list[int], list[str]]:
    """What ``approve``/``reject`` names: held writes by number (``3`` or ``#3``) and, for
    skills, quarantined imports by name (a skill name is never a bare number: the importer
    turns ``2048`` into ``skill-2048``); ``all`` is every one of both."""
    words = arg.replace(",", " ").split()
    if words == ["all"]:
        names = [q.name for q in store.skill_quarantine.list(user_id)] if kind == "skill" else []
        return [h.number for h in store.held_writes.pending(user_id, kind)], names
    chosen: list[int] = []
    names = []
    for word in words:
        if word.lstrip("#").isdigit():
            chosen.append(int(word.lstrip("#")))
        elif kind == "skill" and not word.startswith("#"):
            names.append(word)
        else:
            raise IrisUsageError(
                f"give held write numbers (e.g. 3 or #3) or 'all', not {arg!r}")
    if not chosen and not names:
        raise IrisUsageError("which one? give its number or name (see the pending list) or "
                             "'all'")
    return chosen, names


async def decide_quarantined(store: Store, settings: Settings, user_id: str, verb: str,
                             name: str, *, by: str) -> str:
    """Approve or reject the quarantined skill ``name``; the reply says what happened."""

    from core.errors import NotFound
    from core.skills import quarantine
    from core.skills.library import SkillLibrary

    library = SkillLibrary(store, settings)
    try:
        if verb == "approve":  # writes files and routing vectors: off the event loop
            written = await blocking("skills", user_id, quarantine.approve, library, user_id,
                                     name, by=by, what=f"approving {name}")
            return (f"Approved {name}: it is one of your skills now (version "
                    f"{written.version or written.entry.version}).")
        await blocking("skills", user_id, quarantine.reject, library, user_id, name,
                       what=f"rejecting {name}")
    except (NotFound, IrisUsageError) as exc:
        return str(exc)
    return f"Rejected {name}: the quarantined import and its files are gone."


def reject(store: Store, user_id: str, kind: str, number: int, *, by: str) -> str:
    held = _pending(store, user_id, kind, number)
    if isinstance(held, str):
        return held
    if not store.held_writes.claim(user_id, number, by=by):
        return f"#{number} was decided already."
    store.held_writes.decide(user_id, number, status="rejected", outcome="rejected")
    return f"Dropped #{number}; it was not saved."


async def approve(store: Store, settings: Settings, user_id: str, kind: str, number: int, *,
                  by: str) -> str:
    """Carry out held write ``number``; the reply says what happened. All of it runs off the
    event loop: a skill's files are scanned before they are stored (the ``skills`` lane), a
    memory write is store work (the ``store`` lane)."""
    lane: Lane = "skills" if kind == "skill" else "store"
    return await blocking(lane, user_id, approve_now, store, settings, user_id, kind, number,
                          by=by, what=f"approving #{number}")


def approve_now(store: Store, settings: Settings, user_id: str, kind: str, number: int, *,
                by: str) -> str:
    held = _pending(store, user_id, kind, number)
    if isinstance(held, str):
        return held
    if not store.held_writes.claim(user_id, number, by=by):
        return f"#{number} was decided already."
    try:
        if held.kind == "memory":
            message = _apply_memory(store, settings, held, by)
        else:
            message = _apply_skill(store, settings, held)
    except IrisUsageError as exc:
        store.held_writes.decide(user_id, number, status="failed", outcome=str(exc))
        return f"#{number} could not be saved: {exc}"
    except Exception:
        store.held_writes.release(user_id, number)
        raise
    store.held_writes.decide(user_id, number, status="approved", outcome=message)
    return f"Saved #{number}. {message}"


def _pending(store: Store, user_id: str, kind: str, number: int) -> HeldWrite | str:
    held = store.held_writes.get(user_id, number)
    if held is None or held.kind != kind:
        return f"There is no held {kind} write #{number}."
    if held.status != "pending":
        return f"#{number} was already {held.status}."
    return held


def _apply_memory(store: Store, settings: Settings, held: HeldWrite, by: str) -> str:
    from core.memory.book import Limits, MemoryBook, MemoryBusy
    from core.memory.models import summary
    from core.memory.ops import Author, MemoryRefused

    operations = [MemoryOperation(**op) for op in held.payload["operations"]]
    who = held.payload.get("who") or held.requested_by
    author = Author(provenance=held.provenance, who=f"{who} (confirmed by {by})",
                    session_id=held.session_id)
    try:
        result = MemoryBook(store).write(held.user_id, operations,
                                         limits=Limits.from_settings(settings), author=author)
    except (MemoryRefused, MemoryBusy) as exc:
        raise IrisUsageError(str(exc)) from None
    return summary(result)


def _apply_skill(store: Store, settings: Settings, held: HeldWrite) -> str:
    from core.skills.library import SkillLibrary
    from core.skills.manage import SkillEditor

    editor = SkillEditor(SkillLibrary(store, settings), held.user_id, provenance="agent",
                         note=held.payload.get("note"))
    return editor.apply(held.payload["change"]).message
