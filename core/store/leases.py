"""Leases: compare-and-set rows with an owner and an expiry (chat drains, cron runs)."""

from __future__ import annotations

from core.store.db import Database


class Leases:
    def __init__(self, db: Database):
        self.db = db

    def acquire(self, name: str, user_id: str, owner: str, ttl: float) -> bool:
        """Take the lease if it is free, expired, or already ours."""
        at = self.db.clock.now()
        changed = self.db.execute(
            "INSERT INTO leases (name, user_id, owner, expires_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner,"
            " expires_at = excluded.expires_at, user_id = excluded.user_id"
            " WHERE leases.expires_at < ? OR leases.owner = excluded.owner",
            (name, user_id, owner, at + ttl, at),
        )
        return changed == 1

    def renew(self, name: str, owner: str, ttl: float) -> bool:
        changed = self.db.execute(
            "UPDATE leases SET expires_at = ? WHERE name = ? AND owner = ?",
            (self.db.clock.now() + ttl, name, owner),
        )
        return changed == 1

    def release(self, name: str, owner: str) -> None:
        self.db.execute("DELETE FROM leases WHERE name = ? AND owner = ?", (name, owner))

    def holder(self, name: str) -> str | None:
        row = self.db.one(
            "SELECT owner FROM leases WHERE name = ? AND expires_at >= ?",
            (name, self.db.clock.now()),
        )
        return row["owner"] if row else None

    def sweep_expired(self) -> int:
        return self.db.execute("DELETE FROM leases WHERE expires_at < ?", (self.db.clock.now(),))
