"""Which catalogue tools each session has loaded, in loading order (rows; the rules are in
``core.tools.catalogue`` and ``core.tools.load_tools``)."""

from __future__ import annotations

from collections.abc import Sequence

from core.store.db import Database, Statement


def loaded_rows(user_id: str, session_id: str) -> Statement:
    return ("SELECT name FROM session_tools WHERE user_id = ? AND session_id = ?"
            " ORDER BY position", (user_id, session_id))


class SessionTools:
    def __init__(self, db: Database):
        self.db = db

    def loaded(self, user_id: str, session_id: str) -> list[str]:
        rows = self.db.query(*loaded_rows(user_id, session_id))
        return [row["name"] for row in rows]

    def load(self, user_id: str, session_id: str, names: Sequence[str]) -> list[str]:
        """Record ``names`` as loaded (after those already loaded); returns the new ones."""
        added: list[str] = []
        with self.db.transaction():
            position = int(self.db.scalar(
                "SELECT coalesce(max(position), 0) FROM session_tools"
                " WHERE user_id = ? AND session_id = ?", (user_id, session_id)) or 0)
            for name in names:
                position += 1
                if self.db.execute(
                    "INSERT OR IGNORE INTO session_tools (user_id, session_id, name, position,"
                    " loaded_at) VALUES (?, ?, ?, ?, ?)",
                    (user_id, session_id, name, position, self.db.clock.now()),
                ):
                    added.append(name)
        return added
