"""Team notes: the curated block every member sees (``status`` live), notes held for an admin
(pending), rejected ones, and overflow archived (searchable, restorable). ``user_id`` is the
writer. Every change to the live block is kept as a numbered version (who, when, the block)."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE team_notes (
            team_id TEXT NOT NULL,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            content TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('live', 'pending', 'archived', 'rejected')),
            reason TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            decided_by TEXT,
            decided_at REAL,
            PRIMARY KEY (team_id, id)
        );
        CREATE INDEX team_notes_by_status ON team_notes(team_id, status, created_at);
        CREATE TABLE team_note_versions (
            team_id TEXT NOT NULL,
            number INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            live_ids TEXT NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (team_id, number)
        );
        """
    )
