"""Writing a user's memory: compare-and-set with retry over the store's memory rows.

Every write reads the store, computes the new state (``core.memory.ops``) and commits it only
if the per-user, per-target version is still the one it read; otherwise it reads again and
re-applies. Two workers writing one user's memory at once both succeed and neither loses the
other's change. Reading needs no rules: ``store.memory`` (entries, snapshot, archive).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import IrisError
from core.memory.models import (
    TARGETS,
    ArchivedEntry,
    MemoryEntry,
    MemoryOperation,
    Target,
    Usage,
    WriteResult,
    total_chars,
)
from core.memory.ops import (
    Author,
    MemoryRefused,
    Plan,
    Scanner,
    apply_operations,
    archived,
    default_scan,
    evict,
    overflow_note,
)
from core.store.memory import VersionConflict

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store

MAX_ATTEMPTS = 25


class MemoryBusy(IrisError):
    """Too many concurrent writers kept changing this user's memory; try again."""


@dataclass(frozen=True)
class Limits:
    memory: int
    user: int

    def as_dict(self) -> dict[Target, int]:
        return {"memory": self.memory, "user": self.user}

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(memory=settings.memory_limit_chars, user=settings.user_limit_chars)


class MemoryBook:
    """The rules of writing one store's memory (the rows are ``store.memory``)."""

    def __init__(self, store: Store):
        self.rows = store.memory
        self.clock = store.clock

    def usage(self, user_id: str, limits: Limits) -> dict[Target, Usage]:
        snap, caps = self.rows.snapshot(user_id), limits.as_dict()
        return {
            t: Usage(t, total_chars([e.content for e in snap[t]]), caps[t], len(snap[t]))
            for t in TARGETS
        }

    # -- writing -------------------------------------------------------------------------

    def write(
        self,
        user_id: str,
        operations: Sequence[MemoryOperation],
        *,
        limits: Limits,
        author: Author,
        scan: Scanner = default_scan,
        expect: dict[Target, int] | None = None,
    ) -> WriteResult:
        """Apply ``operations`` all-or-nothing with compare-and-set and retry.

        ``expect`` pins the versions the caller based its edit on (``iris memory edit``): if the
        store changed since, MemoryRefused is raised instead of retrying."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            versions = self.rows.versions(user_id)
            if expect is not None and any(versions[t] != expect[t] for t in TARGETS):
                raise MemoryRefused("memory changed since you started editing; nothing saved")
            current = self.rows.snapshot(user_id)
            plan = apply_operations(
                user_id, current, operations, limits=limits.as_dict(), author=author,
                at=self.clock.now(), scan=scan,
            )
            if self._commit(user_id, versions, current, plan):
                return self._result(user_id, plan, limits, attempt)
            time.sleep(random.uniform(0.001, 0.004) * attempt)
        raise MemoryBusy(f"memory for {user_id} kept changing; gave up after {MAX_ATTEMPTS} tries")

    def _result(self, user_id: str, plan: Plan, limits: Limits, attempt: int) -> WriteResult:
        return WriteResult(
            notes=plan.notes, archived=[a for a in plan.archive if a.reason == "overflow"],
            usage=self.usage(user_id, limits), changed=True, attempts=attempt,
        )

    def _commit(
        self, user_id: str, versions: dict[Target, int],
        current: dict[Target, list[MemoryEntry]], plan: Plan,
        also: Callable[[], None] | None = None,
    ) -> bool:
        try:
            with self.rows.transaction():
                if also is not None:
                    also()
                for target in sorted(plan.targets):
                    self.rows.bump(user_id, target, versions[target])
                for target in plan.targets:
                    self._store_diff(user_id, current[target], plan.entries[target])
                for record in plan.archive:
                    self.rows.archive(record)
        except VersionConflict:
            return False
        return True

    def _store_diff(
        self, user_id: str, before: list[MemoryEntry], after: list[MemoryEntry]
    ) -> None:
        old = {e.id: e for e in before}
        new = {e.id: e for e in after}
        for entry_id in old.keys() - new.keys():
            self.rows.delete(user_id, entry_id)
        for entry_id, entry in new.items():
            if entry_id not in old:
                self.rows.insert(entry)
            elif entry != old[entry_id]:
                self.rows.update(user_id, entry)

    def restore(
        self, user_id: str, archive_id: str, *, limits: Limits, who: str | None,
    ) -> WriteResult:
        """Put an archived entry back in its store (archiving others if it is full)."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            record = self.rows.archived(user_id, archive_id)
            if record.restored_at is not None:
                raise MemoryRefused(f"{archive_id} was already restored (as {record.restored_as})")
            versions = self.rows.versions(user_id)
            current = self.rows.snapshot(user_id)
            author = Author(provenance=record.provenance or "user", who=who)
            op = MemoryOperation(action="add", target=record.target, content=record.content)
            plan = apply_operations(
                user_id, current, [op], limits=limits.as_dict(), author=author,
                at=self.clock.now(),
            )
            text = record.content.strip()
            restored = next(e for e in plan.entries[record.target] if e.content == text)

            def mark(record: ArchivedEntry = record, restored_id: str = restored.id) -> None:
                self.rows.mark_restored(user_id, record.id, restored_id)

            if self._commit(user_id, versions, current, plan, also=mark):
                return self._result(user_id, plan, limits, attempt)
            time.sleep(random.uniform(0.001, 0.004) * attempt)
        raise MemoryBusy(f"memory for {user_id} kept changing; gave up after {MAX_ATTEMPTS} tries")

    # -- identity merges -----------------------------------------------------------------

    def absorb(self, source: str, dest: str, *, limits: Limits, who: str) -> dict[str, int]:
        """Move ``source``'s entries into ``dest`` (call inside the merge's transaction).
        Exact duplicates and entries pushed out by the limit go to ``dest``'s archive."""
        at = self.clock.now()
        author = Author(provenance="user", who=who)
        moved = duplicates = overflowed = 0
        src, dst = self.rows.snapshot(source), self.rows.snapshot(dest)
        for target in TARGETS:
            entries = dst[target]
            texts = {e.content for e in entries}
            position = max((e.position for e in entries), default=0)
            for entry in src[target]:
                entry.user_id = dest
                if entry.content in texts:
                    self.rows.archive(archived(entry, "duplicate (account link)", author, at))
                    self.rows.delete(source, entry.id)
                    duplicates += 1
                    continue
                position += 1
                entry.position = position
                self.rows.move(source, dest, entry.id, position)
                entries.append(entry)
                texts.add(entry.content)
                moved += 1
            for entry in evict(entries, limits.as_dict()[target], set()):
                self.rows.archive(archived(entry, "overflow (account link)", author, at))
                self.rows.delete(dest, entry.id)
                overflowed += 1
            self.rows.bump_unconditionally(dest, target)
        self.rows.drop_versions(source)
        return {"entries moved": moved, "duplicates archived": duplicates,
                "overflow archived": overflowed}


__all__ = [
    "Author",
    "Limits",
    "MemoryBook",
    "MemoryBusy",
    "MemoryRefused",
    "overflow_note",
]
