"""Tools a session loaded from the catalogue (``load_tools``): sent with every later request
of that session, in the order they were loaded, so the tool list only ever grows at its end."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE session_tools (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            name TEXT NOT NULL,
            position INTEGER NOT NULL,
            loaded_at REAL NOT NULL,
            PRIMARY KEY (user_id, session_id, name)
        );
        """
    )
