"""What an import brought in from another agent's home, keyed by that home's own ids, so a
second run takes only what is new and an interrupted run can be completed."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE import_records (
            user_id TEXT NOT NULL,
            source TEXT NOT NULL,
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            target TEXT NOT NULL,
            detail TEXT,
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, source, kind, key)
        );
        """
    )
