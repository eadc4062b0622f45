"""Deliveries held for a WhatsApp template: when a reply falls outside the 24-hour window, a
template reopens the conversation and the reply waits (``held_at``) for the person to write back;
``reopen_id`` is the template message that was sent, so it is sent once."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        ALTER TABLE deliveries ADD COLUMN held_at REAL;
        ALTER TABLE deliveries ADD COLUMN reopen_id TEXT;
        CREATE INDEX deliveries_held ON deliveries(user_id, chat_key, held_at);
        """
    )
