"""Scheduled results for people with no chat Iris can push to (HTTP API and terminal users):
they wait as deliveries on the ``inbox`` platform until read (``read_at``), and a user may
register a webhook they are also pushed to, signed with a secret of their own."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        ALTER TABLE deliveries ADD COLUMN read_at REAL;
        CREATE INDEX deliveries_unread ON deliveries(user_id, platform, read_at, id);

        CREATE TABLE user_webhooks (
            user_id TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            secret TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        """
    )
