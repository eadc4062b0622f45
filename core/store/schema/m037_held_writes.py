"""Writes to memory or skills held for the user's confirmation (made after the turn read
untrusted content), and who asked for a held command (in a group, only they or an owner may
approve it)."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE held_writes (
            user_id TEXT NOT NULL,
            number INTEGER NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            summary TEXT NOT NULL,
            reason TEXT NOT NULL,
            provenance TEXT NOT NULL,
            requested_by TEXT,
            session_id TEXT,
            status TEXT NOT NULL DEFAULT 'pending',
            created_at REAL NOT NULL,
            decided_at REAL,
            decided_by TEXT,
            outcome TEXT,
            PRIMARY KEY (user_id, number)
        );
        CREATE INDEX held_writes_pending ON held_writes(user_id, kind, status, number);

        ALTER TABLE pending_approvals ADD COLUMN requested_by TEXT;
        """
    )
