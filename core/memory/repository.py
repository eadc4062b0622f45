"""Per-user memory in the database: entries, versions for compare-and-set, and the archive.

Every write reads the store, computes the new state (``core.memory.ops``) and commits it only
if the per-user, per-target version is still the one it read; otherwise it reads again and
re-applies. Two workers writing one user's memory at once both succeed and neither loses the
other's change.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.errors import IrisError, NotFound
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
from core.store.db import Database

MAX_ATTEMPTS = 25
ENTRY_COLUMNS = (
    "id", "user_id", "target", "position", "content", "provenance", "author", "session_id",
    "created_at", "updated_at", "last_used_at",
)
ARCHIVE_COLUMNS = (
    "id", "user_id", "target", "content", "reason", "archived_at", "archived_by", "entry_id",
    "provenance", "created_at", "restored_at", "restored_as",
)


class MemoryBusy(IrisError):
    """Too many concurrent writers kept changing this user's memory; try again."""


class _Conflict(Exception):
    pass


@dataclass(frozen=True)
class Limits:
    memory: int
    user: int

    def as_dict(self) -> dict[Target, int]:
        return {"memory": self.memory, "user": self.user}

    @classmethod
    def from_settings(cls, settings: object) -> Limits:
        return cls(memory=settings.memory_limit_chars, user=settings.user_limit_chars)  # type: ignore[attr-defined]


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class MemoryRepository:
    def __init__(self, db: Database):
        self.db = db

    # -- reading -------------------------------------------------------------------------

    def entries(self, user_id: str, target: Target | None = None) -> list[MemoryEntry]:
        sql = "SELECT * FROM memory_entries WHERE user_id = ?"
        params: list[object] = [user_id]
        if target is not None:
            sql += " AND target = ?"
            params.append(target)
        rows = self.db.query(sql + " ORDER BY target, position", params)
        return [MemoryEntry.from_row(row) for row in rows]

    def snapshot(self, user_id: str) -> dict[Target, list[MemoryEntry]]:
        found: dict[Target, list[MemoryEntry]] = {"memory": [], "user": []}
        for entry in self.entries(user_id):
            found[entry.target].append(entry)
        return found

    def usage(self, user_id: str, limits: Limits) -> dict[Target, Usage]:
        snap, caps = self.snapshot(user_id), limits.as_dict()
        return {
            t: Usage(t, total_chars([e.content for e in snap[t]]), caps[t], len(snap[t]))
            for t in TARGETS
        }

    def versions(self, user_id: str) -> dict[Target, int]:
        rows = self.db.query(
            "SELECT target, version FROM memory_versions WHERE user_id = ?", (user_id,)
        )
        found = {row["target"]: row["version"] for row in rows}
        return {t: found.get(t, 0) for t in TARGETS}

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
            versions = self.versions(user_id)
            if expect is not None and any(versions[t] != expect[t] for t in TARGETS):
                raise MemoryRefused("memory changed since you started editing; nothing saved")
            current = self.snapshot(user_id)
            plan = apply_operations(
                user_id, current, operations, limits=limits.as_dict(), author=author,
                at=self.db.clock.now(), scan=scan,
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
            with self.db.transaction():
                if also is not None:
                    also()
                for target in sorted(plan.targets):
                    self._bump(user_id, target, versions[target])
                for target in plan.targets:
                    self._store_diff(user_id, current[target], plan.entries[target])
                for record in plan.archive:
                    self._insert_archive(record)
        except _Conflict:
            return False
        return True

    def _bump(self, user_id: str, target: Target, seen: int) -> None:
        self.db.execute(
            "INSERT INTO memory_versions (user_id, target, version) VALUES (?, ?, 0)"
            " ON CONFLICT (user_id, target) DO NOTHING",
            (user_id, target),
        )
        changed = self.db.execute(
            "UPDATE memory_versions SET version = version + 1 WHERE user_id = ? AND target = ?"
            " AND version = ?",
            (user_id, target, seen),
        )
        if changed != 1:
            raise _Conflict

    def _store_diff(
        self, user_id: str, before: list[MemoryEntry], after: list[MemoryEntry]
    ) -> None:
        old = {e.id: e for e in before}
        new = {e.id: e for e in after}
        for entry_id in old.keys() - new.keys():
            self.db.execute(
                "DELETE FROM memory_entries WHERE user_id = ? AND id = ?", (user_id, entry_id)
            )
        for entry_id, entry in new.items():
            if entry_id not in old:
                self._insert_entry(entry)
            elif entry != old[entry_id]:
                self.db.execute(
                    "UPDATE memory_entries SET position = ?, content = ?, provenance = ?,"
                    " author = ?, session_id = ?, updated_at = ?, last_used_at = ?"
                    " WHERE user_id = ? AND id = ?",
                    (
                        entry.position, entry.content, entry.provenance, entry.author,
                        entry.session_id, entry.updated_at, entry.last_used_at, user_id, entry_id,
                    ),
                )

    def _insert_entry(self, entry: MemoryEntry) -> None:
        marks = ", ".join("?" for _ in ENTRY_COLUMNS)
        self.db.execute(
            f"INSERT INTO memory_entries ({', '.join(ENTRY_COLUMNS)}) VALUES ({marks})",
            tuple(getattr(entry, c) for c in ENTRY_COLUMNS),
        )

    def _insert_archive(self, record: ArchivedEntry) -> None:
        marks = ", ".join("?" for _ in ARCHIVE_COLUMNS)
        self.db.execute(
            f"INSERT INTO memory_archive ({', '.join(ARCHIVE_COLUMNS)}) VALUES ({marks})",
            tuple(getattr(record, c) for c in ARCHIVE_COLUMNS),
        )

    # -- the archive ---------------------------------------------------------------------

    def archived(self, user_id: str, archive_id: str) -> ArchivedEntry:
        row = self.db.one(
            "SELECT * FROM memory_archive WHERE user_id = ? AND id = ?", (user_id, archive_id)
        )
        if not row:
            raise NotFound(f"no archived memory entry {archive_id!r} for this user")
        return ArchivedEntry.from_row(row)

    def list_archive(
        self, user_id: str, *, target: Target | None = None, limit: int = 50,
        include_restored: bool = False,
    ) -> list[ArchivedEntry]:
        sql = "SELECT * FROM memory_archive WHERE user_id = ?"
        params: list[object] = [user_id]
        if target is not None:
            sql += " AND target = ?"
            params.append(target)
        if not include_restored:
            sql += " AND restored_at IS NULL"
        rows = self.db.query(sql + " ORDER BY archived_at DESC, id DESC LIMIT ?", [*params, limit])
        return [ArchivedEntry.from_row(row) for row in rows]

    def count_archive(self, user_id: str) -> int:
        return self.db.scalar(
            "SELECT count(*) FROM memory_archive WHERE user_id = ? AND restored_at IS NULL",
            (user_id,),
        )

    def search_archive(self, user_id: str, query: str, limit: int = 10) -> list[ArchivedEntry]:
        """Archived (not restored) entries matching ``query``: entries holding more of its words
        rank first, the whole phrase counts extra, newer first among equals."""
        words = list(dict.fromkeys(w.casefold() for w in re.findall(r"\w+", query)))[:12]
        words = [w for w in words if len(w) > 1] or words
        phrase = " ".join(query.split()).casefold()
        terms = [(w, 1) for w in words]
        if phrase and phrase not in words:
            terms.append((phrase, max(1, len(words))))
        if not terms:
            return []
        score = " + ".join(
            f"(CASE WHEN lower(content) LIKE ? ESCAPE '\\' THEN {weight} ELSE 0 END)"
            for _, weight in terms
        )
        rows = self.db.query(
            f"SELECT * FROM (SELECT *, ({score}) AS score FROM memory_archive"
            " WHERE user_id = ? AND restored_at IS NULL) WHERE score > 0"
            " ORDER BY score DESC, archived_at DESC LIMIT ?",
            [*(_like(term) for term, _ in terms), user_id, limit],
        )
        for row in rows:
            row.pop("score")
        return [ArchivedEntry.from_row(row) for row in rows]

    def restore(
        self, user_id: str, archive_id: str, *, limits: Limits, who: str | None,
    ) -> WriteResult:
        """Put an archived entry back in its store (archiving others if it is full)."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            record = self.archived(user_id, archive_id)
            if record.restored_at is not None:
                raise MemoryRefused(f"{archive_id} was already restored (as {record.restored_as})")
            versions = self.versions(user_id)
            current = self.snapshot(user_id)
            author = Author(provenance=record.provenance or "user", who=who)
            op = MemoryOperation(action="add", target=record.target, content=record.content)
            plan = apply_operations(
                user_id, current, [op], limits=limits.as_dict(), author=author,
                at=self.db.clock.now(),
            )
            text = record.content.strip()
            restored = next(e for e in plan.entries[record.target] if e.content == text)

            def mark(record: ArchivedEntry = record, restored_id: str = restored.id) -> None:
                changed = self.db.execute(
                    "UPDATE memory_archive SET restored_at = ?, restored_as = ?"
                    " WHERE user_id = ? AND id = ? AND restored_at IS NULL",
                    (self.db.clock.now(), restored_id, user_id, record.id),
                )
                if changed != 1:
                    raise _Conflict

            if self._commit(user_id, versions, current, plan, also=mark):
                return self._result(user_id, plan, limits, attempt)
            time.sleep(random.uniform(0.001, 0.004) * attempt)
        raise MemoryBusy(f"memory for {user_id} kept changing; gave up after {MAX_ATTEMPTS} tries")

    # -- identity merges -----------------------------------------------------------------

    def absorb(self, source: str, dest: str, *, limits: Limits, who: str) -> dict[str, int]:
        """Move ``source``'s entries into ``dest`` (call inside the merge's transaction).
        Exact duplicates and entries pushed out by the limit go to ``dest``'s archive."""
        at = self.db.clock.now()
        author = Author(provenance="user", who=who)
        moved = duplicates = overflowed = 0
        src, dst = self.snapshot(source), self.snapshot(dest)
        for target in TARGETS:
            entries = dst[target]
            texts = {e.content for e in entries}
            position = max((e.position for e in entries), default=0)
            for entry in src[target]:
                entry.user_id = dest
                if entry.content in texts:
                    self._insert_archive(archived(entry, "duplicate (account link)", author, at))
                    self.db.execute(
                        "DELETE FROM memory_entries WHERE user_id = ? AND id = ?",
                        (source, entry.id),
                    )
                    duplicates += 1
                    continue
                position += 1
                entry.position = position
                self.db.execute(
                    "UPDATE memory_entries SET user_id = ?, position = ? WHERE user_id = ?"
                    " AND id = ?",
                    (dest, position, source, entry.id),
                )
                entries.append(entry)
                texts.add(entry.content)
                moved += 1
            for entry in evict(entries, limits.as_dict()[target], set()):
                self._insert_archive(archived(entry, "overflow (account link)", author, at))
                self.db.execute(
                    "DELETE FROM memory_entries WHERE user_id = ? AND id = ?", (dest, entry.id)
                )
                overflowed += 1
            self.db.execute(
                "INSERT INTO memory_versions (user_id, target, version) VALUES (?, ?, 1)"
                " ON CONFLICT (user_id, target) DO UPDATE SET version = version + 1",
                (dest, target),
            )
        self.db.execute("DELETE FROM memory_versions WHERE user_id = ?", (source,))
        return {"entries moved": moved, "duplicates archived": duplicates,
                "overflow archived": overflowed}


__all__ = [
    "Author",
    "Limits",
    "MemoryBusy",
    "MemoryRefused",
    "MemoryRepository",
    "overflow_note",
]
