"""Applying memory operations to a working copy: pure, all-or-nothing, no I/O.

A batch either applies completely or raises ``MemoryRefused`` and changes nothing. Adds that
overflow a store move its least recently used entries to the archive; replace and remove
archive the text they change. Nothing is ever dropped.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.ids import new_id
from core.memory.models import (
    LABELS,
    TARGETS,
    ArchivedEntry,
    MemoryEntry,
    MemoryOperation,
    Target,
    clip,
    total_chars,
)

if TYPE_CHECKING:
    from core.security.findings import Finding

Scanner = Callable[[str], "list[Finding]"]
MAX_LISTED = 8


class MemoryRefused(IrisUsageError):
    """The write was refused (blocked content, no match, ambiguity, too long); nothing changed."""


@dataclass
class Plan:
    entries: dict[Target, list[MemoryEntry]]
    archive: list[ArchivedEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    targets: set[Target] = field(default_factory=set)


@dataclass(frozen=True)
class Author:
    provenance: str
    who: str | None
    session_id: str | None = None


LABEL = re.compile(r"^[^\S\n]*\w[\w \-/()'.]{0,40}:[^\S\n]+", re.M)


def default_scan(text: str) -> list[Finding]:
    """The security scanner on an entry, and again with line labels (``Backup routine: …``)
    taken off, so a command after a label is judged like the same command on its own line."""
    from core.security import scan_text

    findings = scan_text(text)
    if not findings and (unlabeled := LABEL.sub("", text)) != text:
        findings = scan_text(unlabeled)
    return findings


def check_content(content: str, target: Target, limit: int, scan: Scanner = default_scan) -> str:
    """The entry text to store, or MemoryRefused explaining why it cannot be stored."""
    from core.security import describe

    text = content.strip()
    if not text:
        raise MemoryRefused("the entry is empty")
    if any(line.strip() == "§" for line in text.splitlines()):
        raise MemoryRefused("an entry cannot contain a line holding only '§' (the separator)")
    if len(text) > limit:  # before the scan: nothing unbounded is scanned
        raise MemoryRefused(
            f"the entry is {len(text):,} characters; the {target} store holds at most "
            f"{limit:,}. Shorten it or split it into smaller facts."
        )
    findings = scan(text)
    if findings:
        raise MemoryRefused(f"not saved — {describe(findings)}")
    return text


def _listing(entries: Sequence[MemoryEntry]) -> str:
    shown = [f"  [{i}] {clip(e.content, 80)}" for i, e in enumerate(entries[:MAX_LISTED], 1)]
    more = len(entries) - MAX_LISTED
    return "\n".join(shown + ([f"  … and {more} more"] if more > 0 else []))


def find_one(entries: list[MemoryEntry], old_text: str, target: Target) -> MemoryEntry:
    """The entry containing ``old_text``; an error listing candidates when not exactly one."""
    needle = old_text.strip()
    exact = [e for e in entries if e.content == needle]
    if exact:
        return exact[0]
    matches = [e for e in entries if needle in e.content]
    if not matches:
        folded = needle.casefold()
        matches = [e for e in entries if folded in e.content.casefold()]
    if not matches:
        listing = _listing(entries) if entries else "  (the store is empty)"
        raise MemoryRefused(f"no {target} entry contains {clip(needle)!r}. Entries:\n{listing}")
    distinct = list({e.content: e for e in matches}.values())
    if len(distinct) > 1:
        raise MemoryRefused(
            f"{clip(needle)!r} matches {len(distinct)} different {target} entries; use a longer, "
            f"unique old_text. Candidates:\n{_listing(distinct)}"
        )
    return matches[0]


def archived(
    entry: MemoryEntry, reason: str, author: Author, at: float, content: str | None = None
) -> ArchivedEntry:
    return ArchivedEntry(
        id=new_id("arc"), user_id=entry.user_id, target=entry.target,
        content=entry.content if content is None else content, reason=reason, archived_at=at,
        archived_by=author.who, entry_id=entry.id, provenance=entry.provenance,
        created_at=entry.created_at, restored_at=None, restored_as=None,
    )


def new_entry(
    user_id: str, target: Target, content: str, position: int, author: Author, at: float
) -> MemoryEntry:
    return MemoryEntry(
        id=new_id("mem"), user_id=user_id, target=target, position=position, content=content,
        provenance=author.provenance, author=author.who, session_id=author.session_id,
        created_at=at, updated_at=at, last_used_at=at,
    )


class _Batch:
    def __init__(
        self, user_id: str, current: dict[Target, list[MemoryEntry]], limits: dict[Target, int],
        author: Author, at: float, scan: Scanner,
    ):
        self.user_id = user_id
        self.plan = Plan(entries=copy.deepcopy(current))
        self.limits = limits
        self.author = author
        self.at = at
        self.scan = scan
        self.fresh: dict[Target, set[str]] = {"memory": set(), "user": set()}

    def apply(self, op: MemoryOperation) -> None:
        target = op.target
        entries = self.plan.entries[target]
        self.plan.targets.add(target)
        if op.action == "add":
            text = check_content(op.content or "", target, self.limits[target], self.scan)
            same = next((e for e in entries if e.content == text), None)
            if same is not None:
                same.last_used_at = self.at
                self.plan.notes.append(f"Already in {target}: skipped the duplicate.")
                return
            position = max((e.position for e in entries), default=0) + 1
            entry = new_entry(self.user_id, target, text, position, self.author, self.at)
            entries.append(entry)
            self.fresh[target].add(entry.id)
            self.plan.notes.append(f"Added to {target}.")
        elif op.action == "replace":
            entry = find_one(entries, op.old_text or "", target)
            text = check_content(op.content or "", target, self.limits[target], self.scan)
            if text == entry.content:
                entry.last_used_at = self.at
                self.plan.notes.append(f"The {target} entry already reads like that.")
                return
            other = next((e for e in entries if e.content == text and e is not entry), None)
            self.plan.archive.append(archived(entry, "replaced", self.author, self.at))
            if other is not None:
                entries.remove(entry)
                other.last_used_at = self.at
                self.plan.notes.append(
                    f"Replaced in {target}; the new text was already an entry, so the two merged."
                )
                return
            entry.content = text
            entry.provenance = self.author.provenance
            entry.author = self.author.who
            entry.updated_at = entry.last_used_at = self.at
            self.fresh[target].add(entry.id)
            self.plan.notes.append(f"Replaced in {target} (old text archived).")
        else:
            entry = find_one(entries, op.old_text or "", target)
            entries.remove(entry)
            self.fresh[target].discard(entry.id)
            self.plan.archive.append(archived(entry, "removed", self.author, self.at))
            self.plan.notes.append(f"Removed from {target} (kept in the archive).")

    def make_room(self, target: Target) -> None:
        entries = self.plan.entries[target]
        moved = evict(entries, self.limits[target], self.fresh[target])
        if moved:
            self.plan.targets.add(target)
            self.plan.archive += [archived(e, "overflow", self.author, self.at) for e in moved]
            self.plan.notes.append(overflow_note(target, moved))


def evict(entries: list[MemoryEntry], limit: int, protected: set[str]) -> list[MemoryEntry]:
    """Remove least recently used entries (never ``protected`` ones) from ``entries`` until the
    store fits ``limit``; returns them, to be archived."""
    moved: list[MemoryEntry] = []
    while total_chars([e.content for e in entries]) > limit:
        candidates = [e for e in entries if e.id not in protected]
        if not candidates:
            size = total_chars([e.content for e in entries])
            target = entries[0].target if entries else "memory"
            raise MemoryRefused(
                f"these {target} entries total {size:,} characters, more than the store's "
                f"{limit:,} even after archiving every older entry; shorten them"
            )
        oldest = min(candidates, key=lambda e: (e.last_used_at, e.position))
        entries.remove(oldest)
        moved.append(oldest)
    return moved


def overflow_note(target: Target, moved: Sequence[MemoryEntry]) -> str:
    listed = "; ".join(repr(clip(e.content, 50)) for e in moved)
    plural = "entry" if len(moved) == 1 else "entries"
    return (
        f"{LABELS[target]} was full: archived {len(moved)} least recently used {plural} "
        f"(searchable, restorable): {listed}"
    )


def apply_operations(
    user_id: str,
    current: dict[Target, list[MemoryEntry]],
    operations: Sequence[MemoryOperation],
    *,
    limits: dict[Target, int],
    author: Author,
    at: float,
    scan: Scanner = default_scan,
) -> Plan:
    """The state after ``operations``, all of them or none (MemoryRefused names the failing one)."""
    if not operations:
        raise MemoryRefused("no operations given")
    batch = _Batch(user_id, current, limits, author, at, scan)
    for number, op in enumerate(operations, 1):
        try:
            batch.apply(op)
        except MemoryRefused as exc:
            if len(operations) == 1:
                raise
            raise MemoryRefused(
                f"operation {number} ({op.action} on {op.target}) failed, so none of the "
                f"{len(operations)} operations were applied: {exc}"
            ) from None
    for target in TARGETS:
        batch.make_room(target)
    return batch.plan
