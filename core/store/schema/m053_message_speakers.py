"""The names speakers go by in a user's imported conversations (``messages.name`` on user and
assistant turns), listed quickly so a search can tell "What did Marcus say…" is about a speaker."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE INDEX messages_speaker ON messages(user_id, name)
            WHERE name IS NOT NULL AND role IN ('user', 'assistant');
        """
    )
