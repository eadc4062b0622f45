"""Per-user memory rows: entries, their per-target versions (for compare-and-set), the archive,
and the memory reviews' progress marks. Rules (what a write does, the retry loop, eviction)
live in ``core.memory``; this module only reads and writes rows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from core.errors import NotFound
from core.store.db import Database, Row, Statement

Target = Literal["memory", "user"]
TARGETS: tuple[Target, ...] = ("memory", "user")
ENTRY_COLUMNS = (
    "id", "user_id", "target", "position", "content", "provenance", "author", "session_id",
    "created_at", "updated_at", "last_used_at",
)
ARCHIVE_COLUMNS = (
    "id", "user_id", "target", "content", "reason", "archived_at", "archived_by", "entry_id",
    "provenance", "created_at", "restored_at", "restored_as",
)
EDITABLE = ("position", "content", "provenance", "author", "session_id", "updated_at",
            "last_used_at")


class VersionConflict(Exception):
    """A compare-and-set saw a version other than the expected one (inside a transaction:
    raising it rolls the transaction back)."""


@dataclass
class MemoryEntry:
    id: str
    user_id: str
    target: Target
    position: int
    content: str
    provenance: str
    author: str | None
    session_id: str | None
    created_at: float
    updated_at: float
    last_used_at: float

    @classmethod
    def from_row(cls, row: Row) -> MemoryEntry:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class ArchivedEntry:
    id: str
    user_id: str
    target: Target
    content: str
    reason: str
    archived_at: float
    archived_by: str | None
    entry_id: str | None
    provenance: str | None
    created_at: float | None
    restored_at: float | None
    restored_as: str | None

    @classmethod
    def from_row(cls, row: Row) -> ArchivedEntry:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def memory_entry_rows(user_id: str, target: str | None = None) -> Statement:
    sql = "SELECT * FROM memory_entries WHERE user_id = ?"
    params: tuple[object, ...] = (user_id,)
    if target is not None:
        sql += " AND target = ?"
        params = (user_id, target)
    return sql + " ORDER BY target, position", params


def archive_count(user_id: str) -> Statement:
    return ("SELECT count(*) FROM memory_archive WHERE user_id = ? AND restored_at IS NULL",
            (user_id,))

class MemoryRows:
    def __init__(self, db: Database):
        self.db = db

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.db.transaction():
            yield

    # -- entries -------------------------------------------------------------------------

    def entries(self, user_id: str, target: Target | None = None) -> list[MemoryEntry]:
        rows = self.db.query(*memory_entry_rows(user_id, target))
        return [MemoryEntry.from_row(row) for row in rows]

    def snapshot(self, user_id: str) -> dict[Target, list[MemoryEntry]]:
        found: dict[Target, list[MemoryEntry]] = {"memory": [], "user": []}
        for entry in self.entries(user_id):
            found[entry.target].append(entry)
        return found

    def versions(self, user_id: str) -> dict[Target, int]:
        rows = self.db.query(
            "SELECT target, version FROM memory_versions WHERE user_id = ?", (user_id,)
        )
        found = {row["target"]: row["version"] for row in rows}
        return {t: found.get(t, 0) for t in TARGETS}

    def bump(self, user_id: str, target: Target, seen: int) -> None:
        """Compare-and-set the target's version from ``seen`` to ``seen + 1``; VersionConflict
        when another writer moved it first."""
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
            raise VersionConflict(f"memory {target} of {user_id} moved past version {seen}")

    def bump_unconditionally(self, user_id: str, target: Target) -> None:
        self.db.execute(
            "INSERT INTO memory_versions (user_id, target, version) VALUES (?, ?, 1)"
            " ON CONFLICT (user_id, target) DO UPDATE SET version = version + 1",
            (user_id, target),
        )

    def drop_versions(self, user_id: str) -> None:
        self.db.execute("DELETE FROM memory_versions WHERE user_id = ?", (user_id,))

    def insert(self, entry: MemoryEntry) -> None:
        marks = ", ".join("?" for _ in ENTRY_COLUMNS)
        self.db.execute(
            f"INSERT INTO memory_entries ({', '.join(ENTRY_COLUMNS)}) VALUES ({marks})",
            tuple(getattr(entry, c) for c in ENTRY_COLUMNS),
        )

    def update(self, user_id: str, entry: MemoryEntry) -> None:
        """Write the entry's editable fields over the stored row with its id."""
        sets = ", ".join(f"{name} = ?" for name in EDITABLE)
        self.db.execute(
            f"UPDATE memory_entries SET {sets} WHERE user_id = ? AND id = ?",
            (*(getattr(entry, c) for c in EDITABLE), user_id, entry.id),
        )

    def delete(self, user_id: str, entry_id: str) -> None:
        self.db.execute(
            "DELETE FROM memory_entries WHERE user_id = ? AND id = ?", (user_id, entry_id)
        )

    def move(self, source: str, dest: str, entry_id: str, position: int) -> None:
        """Hand one of ``source``'s entries to ``dest`` at ``position`` (account links)."""
        self.db.execute(
            "UPDATE memory_entries SET user_id = ?, position = ? WHERE user_id = ? AND id = ?",
            (dest, position, source, entry_id),
        )

    # -- the archive ---------------------------------------------------------------------

    def archive(self, record: ArchivedEntry) -> None:
        marks = ", ".join("?" for _ in ARCHIVE_COLUMNS)
        self.db.execute(
            f"INSERT INTO memory_archive ({', '.join(ARCHIVE_COLUMNS)}) VALUES ({marks})",
            tuple(getattr(record, c) for c in ARCHIVE_COLUMNS),
        )

    def archived(self, user_id: str, archive_id: str) -> ArchivedEntry:
        row = self.db.one(
            "SELECT * FROM memory_archive WHERE user_id = ? AND id = ?", (user_id, archive_id)
        )
        if not row:
            raise NotFound(f"no archived memory entry {archive_id!r} for this user")
        return ArchivedEntry.from_row(row)

    def mark_restored(self, user_id: str, archive_id: str, restored_as: str) -> None:
        """Mark an archived entry restored; VersionConflict if it was restored meanwhile."""
        changed = self.db.execute(
            "UPDATE memory_archive SET restored_at = ?, restored_as = ?"
            " WHERE user_id = ? AND id = ? AND restored_at IS NULL",
            (self.db.clock.now(), restored_as, user_id, archive_id),
        )
        if changed != 1:
            raise VersionConflict(f"{archive_id} was restored meanwhile")

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
        return int(self.db.scalar(*archive_count(user_id)))

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

    # -- memory reviews' progress --------------------------------------------------------

    def reviewed_up_to(self, user_id: str, session_id: str) -> int:
        """The last message id of the session a memory review has looked at (0: none)."""
        return int(self.db.scalar(
            "SELECT reviewed_message_id FROM memory_reviews WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        ) or 0)

    def mark_reviewed(self, user_id: str, session_id: str, message_id: int) -> None:
        self.db.execute(
            "INSERT INTO memory_reviews (user_id, session_id, reviewed_message_id, reviews,"
            " reviewed_at) VALUES (?, ?, ?, 1, ?)"
            " ON CONFLICT (user_id, session_id) DO UPDATE SET"
            " reviewed_message_id = max(reviewed_message_id, excluded.reviewed_message_id),"
            " reviews = reviews + 1, reviewed_at = excluded.reviewed_at",
            (user_id, session_id, message_id, self.db.clock.now()),
        )
