"""What a platform says about Iris' own bot (Telegram's @username), so a webhook never has to
ask the platform while it waits. System rows: ``user_id`` is the system scope."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE bot_identities (
            user_id TEXT NOT NULL DEFAULT 'system',
            platform TEXT NOT NULL,
            bot_id TEXT NOT NULL,
            identity TEXT NOT NULL,
            fetched_at REAL NOT NULL,
            PRIMARY KEY (platform, bot_id)
        );
        """
    )
