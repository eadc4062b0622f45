"""The task list the model keeps for a session (the ``todo`` tool), shown by ``/status``."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE session_todos (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            items TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (user_id, session_id)
        );
        """
    )
