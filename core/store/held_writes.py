"""Writes to memory or skills held until the user confirms them (rows; the rules are in
``core.asking.confirm``). Numbered per user; status pending → approved | rejected | failed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.store.db import Database, Row


@dataclass(frozen=True)
class HeldWrite:
    user_id: str
    number: int
    kind: str  # "memory" | "skill"
    payload: dict[str, Any]  # what to replay on approval
    summary: str  # one line for the user: what the write would do
    reason: str  # why it was held
    provenance: str
    requested_by: str | None  # the account whose turn made it
    session_id: str | None
    status: str
    created_at: float
    decided_at: float | None
    decided_by: str | None
    outcome: str | None

    @classmethod
    def from_row(cls, row: Row) -> HeldWrite:
        values = {name: row[name] for name in cls.__dataclass_fields__}
        values["payload"] = json.loads(row["payload"])
        return cls(**values)


class HeldWrites:
    def __init__(self, db: Database):
        self.db = db

    def hold(
        self, user_id: str, *, kind: str, payload: dict[str, Any], summary: str, reason: str,
        provenance: str, requested_by: str | None, session_id: str | None,
    ) -> HeldWrite:
        with self.db.transaction():
            number = 1 + (self.db.scalar(
                "SELECT max(number) FROM held_writes WHERE user_id = ?", (user_id,)
            ) or 0)
            self.db.execute(
                "INSERT INTO held_writes (user_id, number, kind, payload, summary, reason,"
                " provenance, requested_by, session_id, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (user_id, number, kind, json.dumps(payload, sort_keys=True), summary, reason,
                 provenance, requested_by, session_id, self.db.clock.now()),
            )
        held = self.get(user_id, number)
        assert held is not None
        return held

    def get(self, user_id: str, number: int) -> HeldWrite | None:
        row = self.db.one(
            "SELECT * FROM held_writes WHERE user_id = ? AND number = ?", (user_id, number)
        )
        return HeldWrite.from_row(row) if row else None

    def pending(self, user_id: str, kind: str | None = None) -> list[HeldWrite]:
        rows = self.db.query(
            "SELECT * FROM held_writes WHERE user_id = ? AND status = 'pending'"
            " AND (? IS NULL OR kind = ?) ORDER BY number",
            (user_id, kind, kind),
        )
        return [HeldWrite.from_row(row) for row in rows]

    def claim(self, user_id: str, number: int, *, by: str) -> bool:
        """Take a pending write to decide it; False when it was decided already."""
        changed = self.db.execute(
            "UPDATE held_writes SET status = 'deciding', decided_at = ?, decided_by = ?"
            " WHERE user_id = ? AND number = ? AND status = 'pending'",
            (self.db.clock.now(), by, user_id, number),
        )
        return changed == 1

    def decide(self, user_id: str, number: int, *, status: str, outcome: str) -> None:
        self.db.execute(
            "UPDATE held_writes SET status = ?, outcome = ? WHERE user_id = ? AND number = ?"
            " AND status = 'deciding'",
            (status, outcome, user_id, number),
        )

    def release(self, user_id: str, number: int) -> None:
        """Back to pending (a decision that could not be carried out, e.g. a busy store)."""
        self.db.execute(
            "UPDATE held_writes SET status = 'pending', decided_at = NULL, decided_by = NULL"
            " WHERE user_id = ? AND number = ? AND status = 'deciding'",
            (user_id, number),
        )
