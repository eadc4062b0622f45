"""What kind of model call a usage row counts: chat (the default, and every row before this),
vision, speech or transcription."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        ALTER TABLE usage ADD COLUMN kind TEXT NOT NULL DEFAULT 'chat';
        """
    )
