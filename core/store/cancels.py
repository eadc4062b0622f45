"""Cancel requests: ``/stop`` marks the chat's running (or next) turn; the turn loop checks the
mark between steps, so a stop recorded by one container stops a turn running in another."""

from __future__ import annotations

from typing import cast

from core.store.db import Database, Statement


def cancel_requested(user_id: str, inbox_id: int) -> Statement:
    return ("SELECT count(*) FROM turn_cancels WHERE user_id = ? AND inbox_id = ?",
            (user_id, inbox_id))

class TurnCancels:
    def __init__(self, db: Database):
        self.db = db

    def request_current(self, user_id: str, chat_key: str, *, by: str | None) -> int | None:
        """Mark the chat's oldest unfinished entry (the one running, or next to run) as
        cancelled. Returns its inbox id, or None when nothing is waiting or running."""
        with self.db.transaction():
            row = self.db.one(
                "SELECT id FROM inbox WHERE user_id = ? AND chat_key = ? AND status = 'pending'"
                " ORDER BY id LIMIT 1",
                (user_id, chat_key),
            )
            if row is None:
                return None
            self.db.execute(
                "INSERT INTO turn_cancels (inbox_id, user_id, chat_key, requested_by,"
                " requested_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (inbox_id) DO NOTHING",
                (row["id"], user_id, chat_key, by, self.db.clock.now()),
            )
            return cast("int | None", row["id"])

    def requested(self, user_id: str, inbox_id: int) -> bool:
        return bool(
            self.db.scalar(*cancel_requested(user_id, inbox_id))
        )
