"""The web dashboard's sign-in links and sessions. Only SHA-256 hashes of the tokens are
stored: a copy of the database opens no dashboard."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE dashboard_links (
            token_hash TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            is_owner INTEGER NOT NULL DEFAULT 0,
            issued_by TEXT NOT NULL,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            used_at REAL
        );
        CREATE INDEX dashboard_links_user ON dashboard_links(user_id, created_at);

        CREATE TABLE dashboard_sessions (
            id TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            is_owner INTEGER NOT NULL DEFAULT 0,
            csrf TEXT NOT NULL,
            user_agent TEXT,
            created_at REAL NOT NULL,
            last_seen_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            revoked_at REAL
        );
        CREATE INDEX dashboard_sessions_user ON dashboard_sessions(user_id, created_at);
        """
    )
