"""Personas as rows: one per user, the text they gave and where it came from. What may be stored
(length, safety scan) is ``core.memory.persona``'s; this module only reads and writes rows."""

from __future__ import annotations

from dataclasses import dataclass

from core.store.db import Database, Statement


@dataclass(frozen=True)
class PersonaRow:
    user_id: str
    content: str
    source: str  # user | import-hermes | …
    updated_by: str | None
    updated_at: float


def persona_row(user_id: str) -> Statement:
    return "SELECT * FROM personas WHERE user_id = ?", (user_id,)

class Personas:
    def __init__(self, db: Database):
        self.db = db

    def get(self, user_id: str) -> PersonaRow | None:
        row = self.db.one(*persona_row(user_id))
        return PersonaRow(**row) if row else None

    def put(self, user_id: str, content: str, *, source: str, by: str | None) -> None:
        self.db.execute(
            "INSERT INTO personas (user_id, content, source, updated_by, updated_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET content ="
            " excluded.content, source = excluded.source, updated_by = excluded.updated_by,"
            " updated_at = excluded.updated_at",
            (user_id, content, source, by, self.db.clock.now()),
        )

    def delete(self, user_id: str) -> bool:
        return self.db.execute("DELETE FROM personas WHERE user_id = ?", (user_id,)) > 0
