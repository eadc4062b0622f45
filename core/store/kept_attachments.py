"""Email attachments kept in the object store, and when: the rows the retention sweep reads.
Every method but ``owners_due`` (a named system sweep returning user ids, never content) takes
the owning user."""

from __future__ import annotations

from collections.abc import Sequence

from core.store.db import Database


class KeptAttachments:
    def __init__(self, db: Database):
        self.db = db

    def keep(self, user_id: str, key: str) -> None:
        """Note that ``key`` is kept for ``user_id`` now; a key already noted keeps its time."""
        self.db.execute(
            "INSERT OR IGNORE INTO kept_attachments (user_id, object_key, kept_at)"
            " VALUES (?, ?, ?)",
            (user_id, key, self.db.clock.now()),
        )

    def owners_due(self, kept_before: float, *, limit: int) -> list[str]:
        """System sweep: the users holding an attachment kept before ``kept_before``."""
        rows = self.db.query(
            "SELECT DISTINCT user_id FROM kept_attachments WHERE kept_at < ?"
            " ORDER BY user_id LIMIT ?",
            (kept_before, limit),
        )
        return [row["user_id"] for row in rows]

    def due(self, user_id: str, kept_before: float, *, limit: int) -> list[str]:
        """``user_id``'s keys kept before ``kept_before``, oldest first."""
        rows = self.db.query(
            "SELECT object_key FROM kept_attachments WHERE user_id = ? AND kept_at < ?"
            " ORDER BY kept_at, object_key LIMIT ?",
            (user_id, kept_before, limit),
        )
        return [row["object_key"] for row in rows]

    def keys(self, user_id: str) -> list[str]:
        rows = self.db.query(
            "SELECT object_key FROM kept_attachments WHERE user_id = ? ORDER BY object_key",
            (user_id,),
        )
        return [row["object_key"] for row in rows]

    def forget(self, user_id: str, keys: Sequence[str]) -> None:
        for key in keys:
            self.db.execute(
                "DELETE FROM kept_attachments WHERE user_id = ? AND object_key = ?",
                (user_id, key),
            )
