"""Skills imported with safety findings wait in quarantine until the user reviews them: the
files (kept in the object store under ``quarantine/<name>/``), the findings with file and line,
and where the skill came from. Nothing here is in the library, so nothing here reaches a
prompt, the skill index or the routing vectors."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE skill_quarantine (
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            source TEXT NOT NULL,
            path TEXT NOT NULL,
            files TEXT NOT NULL,
            findings TEXT NOT NULL,
            warnings TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, name)
        );
        """
    )
