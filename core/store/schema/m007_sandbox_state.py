"""Sandbox state per user and backend (e.g. Modal's snapshot image id), and commands held for
the user's approval."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE sandbox_state (
            user_id TEXT NOT NULL,
            backend TEXT NOT NULL,
            state TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (user_id, backend)
        );

        CREATE TABLE pending_approvals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL,
            number INTEGER NOT NULL,
            chat_key TEXT NOT NULL,
            session_id TEXT,
            command TEXT NOT NULL,
            workdir TEXT,
            timeout REAL,
            reason TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            decided_at REAL,
            exit_code INTEGER,
            output TEXT,
            UNIQUE (user_id, number)
        );
        CREATE INDEX pending_approvals_user ON pending_approvals(user_id, status, number);
        """
    )
