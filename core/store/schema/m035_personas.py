"""Personas: each user's own words on how Iris should be with them (imported from Hermes'
SOUL.md or set with ``/persona``), shown as a small prompt section."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE personas (
            user_id TEXT PRIMARY KEY REFERENCES users(id),
            content TEXT NOT NULL,
            source TEXT NOT NULL,
            updated_by TEXT,
            updated_at REAL NOT NULL
        );
        """
    )
