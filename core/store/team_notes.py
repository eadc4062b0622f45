"""Team notes rows: the live block, notes held for an admin, the archive, and numbered versions
of the live block. Every call names the acting user and checks membership through ``Teams``:
members read and propose; only admins (and owners) publish, decide, archive and restore. The
rules (scanning, when a write is held, overflow) live in ``core.teams.notes``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from core.errors import IrisUsageError, NotFound
from core.ids import new_id
from core.store.db import Database, Row
from core.store.teams import Teams

Status = Literal["live", "pending", "archived", "rejected"]


@dataclass(frozen=True)
class TeamNote:
    team_id: str
    id: str
    author: str
    content: str
    status: Status
    reason: str
    created_at: float
    decided_by: str | None
    decided_at: float | None

    @classmethod
    def from_row(cls, row: Row) -> TeamNote:
        return cls(
            row["team_id"],
            row["id"],
            row["user_id"],
            row["content"],
            row["status"],
            row["reason"],
            row["created_at"],
            row["decided_by"],
            row["decided_at"],
        )


@dataclass(frozen=True)
class NotesVersion:
    number: int
    actor: str
    note_ids: list[str]
    at: float


def _escape_like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class TeamNotes:
    def __init__(self, db: Database, teams: Teams):
        self.db = db
        self.teams = teams

    # -- reads (any member) -------------------------------------------------------------------
    def live(self, actor: str, team_id: str) -> list[TeamNote]:
        self.teams.require(team_id, actor)
        return self._with_status(team_id, "live")

    def search_archive(
        self, actor: str, team_id: str, word: str, limit: int = 20
    ) -> list[TeamNote]:
        self.teams.require(team_id, actor)
        rows = self.db.query(
            "SELECT * FROM team_notes WHERE team_id = ? AND status = 'archived'"
            " AND content LIKE ? ESCAPE '\\' ORDER BY created_at DESC LIMIT ?",
            (team_id, _escape_like(word), limit),
        )
        return [TeamNote.from_row(r) for r in rows]

    def versions(self, actor: str, team_id: str) -> list[NotesVersion]:
        self.teams.require(team_id, actor)
        rows = self.db.query(
            "SELECT * FROM team_note_versions WHERE team_id = ? ORDER BY number", (team_id,)
        )
        return [
            NotesVersion(r["number"], r["user_id"], json.loads(r["live_ids"]), r["at"])
            for r in rows
        ]

    def pending(self, actor: str, team_id: str) -> list[TeamNote]:
        self.teams.require(team_id, actor, "admin")
        return self._with_status(team_id, "pending")

    def get(self, actor: str, team_id: str, note_id: str) -> TeamNote:
        self.teams.require(team_id, actor)
        row = self.db.one(
            "SELECT * FROM team_notes WHERE team_id = ? AND id = ?", (team_id, note_id)
        )
        if not row:
            raise NotFound(f"no team note {note_id!r}")
        return TeamNote.from_row(row)

    # -- writes -------------------------------------------------------------------------------
    def propose(self, actor: str, team_id: str, content: str, reason: str) -> TeamNote:
        """A member's note held for an admin's decision."""
        with self.db.transaction():
            self.teams.require(team_id, actor)
            note = self._insert(team_id, actor, content, "pending", reason)
            self.teams.audit_write(team_id, actor, "note.propose", f"{note.id}: {reason}")
        return note

    def publish(self, actor: str, team_id: str, content: str, archive: list[str]) -> TeamNote:
        """An admin's note straight into the live block, ``archive`` (live note ids) moved out
        to make room; one new version."""
        with self.db.transaction():
            self.teams.require(team_id, actor, "admin")
            note = self._insert(team_id, actor, content, "live", "")
            self._archive(team_id, archive, actor, "overflow")
            self.teams.audit_write(team_id, actor, "note.write", note.id)
            self._version(team_id, actor)
        return note

    def decide(
        self, actor: str, team_id: str, note_id: str, approve: bool, archive: Sequence[str] = ()
    ) -> None:
        with self.db.transaction():
            self.teams.require(team_id, actor, "admin")
            changed = self.db.execute(
                "UPDATE team_notes SET status = ?, decided_by = ?, decided_at = ?"
                " WHERE team_id = ? AND id = ? AND status = 'pending'",
                ("live" if approve else "rejected", actor, self.db.clock.now(), team_id, note_id),
            )
            if not changed:
                raise NotFound(f"no pending team note {note_id!r}")
            if approve:
                self._archive(team_id, list(archive), actor, "overflow")
                self._version(team_id, actor)
            self.teams.audit_write(
                team_id, actor, "note.approve" if approve else "note.reject", note_id
            )

    def archive(self, actor: str, team_id: str, note_id: str) -> None:
        with self.db.transaction():
            self.teams.require(team_id, actor, "admin")
            if not self._archive(team_id, [note_id], actor, "removed"):
                raise NotFound(f"no live team note {note_id!r}")
            self.teams.audit_write(team_id, actor, "note.archive", note_id)
            self._version(team_id, actor)

    def restore(self, actor: str, team_id: str, number: int) -> None:
        """Make version ``number``'s block live again (notes since then are archived, none
        deleted); recorded as a new version."""
        with self.db.transaction():
            self.teams.require(team_id, actor, "admin")
            row = self.db.one(
                "SELECT live_ids FROM team_note_versions WHERE team_id = ? AND number = ?",
                (team_id, number),
            )
            if not row:
                raise NotFound(f"no version {number} of the team notes")
            wanted = set(json.loads(row["live_ids"]))
            now_live = {n.id for n in self._with_status(team_id, "live")}
            self._archive(team_id, sorted(now_live - wanted), actor, f"restore of v{number}")
            for note_id in sorted(wanted - now_live):
                self.db.execute(
                    "UPDATE team_notes SET status = 'live', decided_by = ?, decided_at = ?"
                    " WHERE team_id = ? AND id = ?",
                    (actor, self.db.clock.now(), team_id, note_id),
                )
            self.teams.audit_write(team_id, actor, "note.restore", f"v{number}")
            self._version(team_id, actor)

    # -- internals ----------------------------------------------------------------------------
    def _with_status(self, team_id: str, status: Status) -> list[TeamNote]:
        rows = self.db.query(
            "SELECT * FROM team_notes WHERE team_id = ? AND status = ? ORDER BY created_at, id",
            (team_id, status),
        )
        return [TeamNote.from_row(r) for r in rows]

    def _insert(
        self, team_id: str, author: str, content: str, status: Status, reason: str
    ) -> TeamNote:
        if not content.strip():
            raise IrisUsageError("the note is empty")
        note_id, now = new_id("tnote"), self.db.clock.now()
        self.db.execute(
            "INSERT INTO team_notes (team_id, id, user_id, content, status, reason, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (team_id, note_id, author, content, status, reason, now),
        )
        return TeamNote(team_id, note_id, author, content, status, reason, now, None, None)

    def _archive(self, team_id: str, note_ids: list[str], actor: str, reason: str) -> int:
        changed = 0
        for note_id in note_ids:
            changed += self.db.execute(
                "UPDATE team_notes SET status = 'archived', reason = ?, decided_by = ?,"
                " decided_at = ? WHERE team_id = ? AND id = ? AND status = 'live'",
                (reason, actor, self.db.clock.now(), team_id, note_id),
            )
        return changed

    def _version(self, team_id: str, actor: str) -> None:
        ids = [n.id for n in self._with_status(team_id, "live")]
        self.db.execute(
            "INSERT INTO team_note_versions (team_id, number, user_id, live_ids, at) VALUES"
            " (?, (SELECT coalesce(max(number), 0) + 1 FROM team_note_versions WHERE team_id = ?),"
            " ?, ?, ?)",
            (team_id, team_id, actor, json.dumps(ids), self.db.clock.now()),
        )
