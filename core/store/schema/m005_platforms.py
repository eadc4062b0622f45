"""Turn cancellation requests (``/stop``), readable by a worker in any container."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE turn_cancels (
            inbox_id INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            chat_key TEXT NOT NULL,
            requested_by TEXT,
            requested_at REAL NOT NULL
        );
        CREATE INDEX turn_cancels_user ON turn_cancels(user_id, chat_key);
        """
    )
