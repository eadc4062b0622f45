"""Images a user sent, kept with their message as references to stored objects
(``core.intake.images``): a JSON list of ``{"id", "mime_type"}``, never the bytes."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript("ALTER TABLE messages ADD COLUMN images TEXT;")
