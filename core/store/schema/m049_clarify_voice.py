"""Questions the model asked with ``clarify`` (open until answered or superseded), and each
person's choice of spoken replies (``/voice``; NULL: the deployment's default)."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE clarifications (
            user_id TEXT NOT NULL,
            id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            chat_key TEXT NOT NULL,
            account TEXT NOT NULL,
            question TEXT NOT NULL,
            choices TEXT NOT NULL,
            created_at REAL NOT NULL,
            closed_by INTEGER,
            PRIMARY KEY (user_id, id)
        );
        CREATE INDEX clarifications_chat ON clarifications (user_id, chat_key, created_at);
        ALTER TABLE users ADD COLUMN voice_replies INTEGER;
        """
    )
