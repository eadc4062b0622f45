"""The skill index in the database: one row per library skill and version, usage counters,
and the records it reads them into (``core.skills.records`` re-exports them).

Every method takes the owning user. The one exception, ``users_with_skills``, is the named sweep
``iris skills curate`` starts from; it returns user ids only.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from core.store.db import Database, Row, Statement


@dataclass(frozen=True)
class SkillUsage:
    shown: int = 0
    used: int = 0
    patched: int = 0
    last_shown_at: float | None = None
    last_used_at: float | None = None
    last_patched_at: float | None = None
    succeeded: int = 0  # turns that loaded the skill and went well
    failed: int = 0  # ... and went wrong (error streak, failure, /stop, the user correcting)
    last_failed_at: float | None = None

    @property
    def failing(self) -> bool:
        """It keeps preceding failures: at least two, and more than successes."""
        return self.failed >= 2 and self.failed > self.succeeded


@dataclass(frozen=True)
class SkillEntry:
    """A skill as the index sees it: a bundled skill, or the head of a user's library skill."""

    name: str
    description: str
    tags: tuple[str, ...]
    category: str | None
    origin: str  # provenance of the first version: bundled (a user copy), imported, agent, user
    provenance: str  # provenance of the current version
    version: int  # 0 for a bundled skill
    files: tuple[str, ...]
    search_text: str = ""
    status: str = "active"
    source: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    stale_at: float | None = None
    archived_at: float | None = None
    usage: SkillUsage = field(default_factory=SkillUsage)
    team_id: str | None = None  # a team skill (origin "team"): the team that offers it

    @property
    def bundled(self) -> bool:
        return self.version == 0

    @property
    def kind(self) -> str:
        """How a person would name where it came from."""
        if self.bundled:
            return "bundled"
        if self.team_id is not None:
            return self.source or "team"
        if self.origin == "bundled":
            return "your copy of a bundled skill"
        if self.origin == "imported":
            return "imported" if self.provenance == "imported" else "imported, since edited"
        return {"agent": "written by Iris", "user": "yours"}.get(self.origin, self.origin)


@dataclass(frozen=True)
class SkillVersion:
    name: str
    version: int
    provenance: str
    action: str
    note: str | None
    archived: bool
    created_at: float


@dataclass(frozen=True)
class IndexRow:
    """The fields of a library skill that a new version sets."""

    name: str
    description: str
    tags: tuple[str, ...]
    category: str | None
    provenance: str
    files: tuple[str, ...]
    search_text: str
    source: str | None = None


def _usage(row: Row | None) -> SkillUsage:
    if not row:
        return SkillUsage()
    return SkillUsage(
        shown=row["shown"], used=row["used"], patched=row["patched"],
        last_shown_at=row["last_shown_at"], last_used_at=row["last_used_at"],
        last_patched_at=row["last_patched_at"], succeeded=row["succeeded"],
        failed=row["failed"], last_failed_at=row["last_failed_at"],
    )


def _entry(row: Row, usage: SkillUsage) -> SkillEntry:
    return SkillEntry(
        name=row["name"], description=row["description"], tags=tuple(json.loads(row["tags"])),
        category=row["category"], origin=row["origin"], provenance=row["provenance"],
        version=row["version"], files=tuple(json.loads(row["files"])),
        search_text=row["search_text"], status=row["status"], source=row["source"],
        created_at=row["created_at"], updated_at=row["updated_at"], stale_at=row["stale_at"],
        archived_at=row["archived_at"], usage=usage,
    )


def skill_usage_rows(user_id: str) -> Statement:
    return "SELECT * FROM skill_usage WHERE user_id = ?", (user_id,)


def skill_rows(user_id: str, *, include_archived: bool = False) -> Statement:
    sql = "SELECT * FROM skills WHERE user_id = ?"
    if not include_archived:
        sql += " AND status != 'archived'"
    return sql + " ORDER BY name", (user_id,)


EVENTS = ("shown", "used", "patched", "succeeded", "failed")


class SkillCatalog:
    def __init__(self, db: Database):
        self.db = db

    def get(self, user_id: str, name: str) -> SkillEntry | None:
        row = self.db.one("SELECT * FROM skills WHERE user_id = ? AND name = ?", (user_id, name))
        return _entry(row, self.usage_of(user_id, name)) if row else None

    def list(self, user_id: str, *, include_archived: bool = False) -> builtins.list[SkillEntry]:
        usage = self.usage(user_id)
        rows = self.db.query(*skill_rows(user_id, include_archived=include_archived))
        return [_entry(row, usage.get(row["name"], SkillUsage())) for row in rows]

    def commit(
        self, user_id: str, row: IndexRow, *, version: int, expected: int | None,
        action: str, note: str | None, archived: bool, origin: str,
    ) -> bool:
        """Record ``version`` as the skill's head, if its head is still ``expected`` (None: the
        skill must be new). False when another writer got there first; nothing is changed."""
        at = self.db.clock.now()
        status = "archived" if archived else "active"
        with self.db.transaction():
            current = self.db.one(
                "SELECT version FROM skills WHERE user_id = ? AND name = ?", (user_id, row.name)
            )
            if (current["version"] if current else None) != expected:
                return False
            values = (
                row.description, json.dumps(list(row.tags)), row.category, row.provenance,
                version, json.dumps(list(row.files)), row.search_text, status, at,
                at if archived else None,
            )
            if current is None:
                self.db.execute(
                    "INSERT INTO skills (description, tags, category, provenance, version, files,"
                    " search_text, status, updated_at, archived_at, user_id, name, origin,"
                    " source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*values, user_id, row.name, origin, row.source, at),
                )
            else:
                self.db.execute(
                    "UPDATE skills SET description = ?, tags = ?, category = ?, provenance = ?,"
                    " version = ?, files = ?, search_text = ?, status = ?, updated_at = ?,"
                    " archived_at = ?, stale_at = NULL, source = coalesce(?, source)"
                    " WHERE user_id = ? AND name = ?",
                    (*values, row.source, user_id, row.name),
                )
            self.db.execute(
                "INSERT INTO skill_versions (user_id, name, version, provenance, action, note,"
                " archived, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (user_id, row.name, version, row.provenance, action, note, int(archived), at),
            )
        return True

    def versions(self, user_id: str, name: str) -> builtins.list[SkillVersion]:
        rows = self.db.query(
            "SELECT * FROM skill_versions WHERE user_id = ? AND name = ? ORDER BY version",
            (user_id, name),
        )
        return [
            SkillVersion(
                name=r["name"], version=r["version"], provenance=r["provenance"],
                action=r["action"], note=r["note"], archived=bool(r["archived"]),
                created_at=r["created_at"],
            )
            for r in rows
        ]

    def usage(self, user_id: str) -> dict[str, SkillUsage]:
        rows = self.db.query(*skill_usage_rows(user_id))
        return {row["name"]: _usage(row) for row in rows}

    def usage_of(self, user_id: str, name: str) -> SkillUsage:
        return _usage(self.db.one(
            "SELECT * FROM skill_usage WHERE user_id = ? AND name = ?", (user_id, name)
        ))

    def record(self, user_id: str, names: Iterable[str], event: str, *,
               at: float | None = None) -> None:
        """Count ``event`` (shown, used, patched, succeeded or failed) for each named skill.
        Using a stale skill makes it active again."""
        if event not in EVENTS:
            raise ValueError(f"unknown skill usage event {event!r}")
        at = self.db.clock.now() if at is None else at
        statements: builtins.list[Statement] = []
        for name in dict.fromkeys(names):
            statements.append((
                f"INSERT INTO skill_usage (user_id, name, {event}, last_{event}_at)"
                f" VALUES (?, ?, 1, ?) ON CONFLICT (user_id, name) DO UPDATE SET"
                f" {event} = {event} + 1, last_{event}_at = excluded.last_{event}_at",
                (user_id, name, at),
            ))
            if event in ("used", "patched"):
                statements.append((
                    "UPDATE skills SET status = 'active', stale_at = NULL"
                    " WHERE user_id = ? AND name = ? AND status = 'stale'",
                    (user_id, name),
                ))
        if statements:
            self.db.write_then_read(statements, [])

    def set_status(self, user_id: str, name: str, status: str, *, at: float) -> None:
        column = {"stale": "stale_at", "archived": "archived_at"}[status]
        self.db.execute(
            f"UPDATE skills SET status = ?, {column} = ? WHERE user_id = ? AND name = ?",
            (status, at, user_id, name),
        )

    def await_outcome(
        self, user_id: str, session_id: str, names: builtins.list[str], *, inbox_id: int
    ) -> str | None:
        """Remember the skills the turn answering ``inbox_id`` loaded until the session's next
        message judges them. When that message is stored already (its turn ran while this
        turn's hooks waited), nothing is kept and its text is returned to judge by now. One
        transaction: the next turn either finds what is kept here or is found here."""
        with self.db.transaction():
            row = self.db.one(
                "SELECT content FROM messages WHERE user_id = ? AND session_id = ?"
                " AND role = 'user' AND id > (SELECT COALESCE(MAX(id), 0) FROM messages"
                " WHERE user_id = ? AND session_id = ? AND inbox_id = ?) ORDER BY id LIMIT 1",
                (user_id, session_id, user_id, session_id, inbox_id),
            )
            if row is not None:
                return str(row["content"])
            self.db.execute(
                "INSERT INTO skill_outcome_pending (user_id, session_id, skills, created_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (user_id, session_id) DO UPDATE SET"
                " skills = excluded.skills, created_at = excluded.created_at",
                (user_id, session_id, json.dumps(names), self.db.clock.now()),
            )
        return None

    def awaiting(self, user_id: str, session_id: str) -> builtins.list[str]:
        """The skills waiting for a verdict in this session (left in place)."""
        row = self.db.one(
            "SELECT skills FROM skill_outcome_pending WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        )
        names: builtins.list[str] = json.loads(row["skills"]) if row else []
        return names

    def take_awaiting(self, user_id: str, session_id: str) -> builtins.list[str]:
        """The skills waiting for a verdict in this session (removed: judged once). Looked for
        first outside a transaction: most turns find none, and a remote database's write lock
        is then not taken at all."""
        if not self.awaiting(user_id, session_id):
            return []
        with self.db.transaction():
            row = self.db.one(
                "SELECT skills FROM skill_outcome_pending WHERE user_id = ? AND session_id = ?",
                (user_id, session_id),
            )
            if row is None:
                return []
            self.db.execute(
                "DELETE FROM skill_outcome_pending WHERE user_id = ? AND session_id = ?",
                (user_id, session_id),
            )
        names: builtins.list[str] = json.loads(row["skills"])
        return names

    def users_with_skills(self) -> builtins.list[str]:
        """The users owning library skills or usage counters (keys only, for curation)."""
        rows = self.db.query(
            "SELECT user_id FROM skills UNION SELECT user_id FROM skill_usage ORDER BY user_id"
        )
        return [row["user_id"] for row in rows]
