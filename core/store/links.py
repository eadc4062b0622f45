"""Account link codes (``link_codes``): issued by one account, redeemed by another, then the
two users are merged. Expiry and the merge itself are ``core.identity``'s rules."""

from __future__ import annotations

from core.store.db import Database, Row


class LinkCodes:
    def __init__(self, db: Database):
        self.db = db

    def issue(self, code: str, *, user_id: str, account: str, at: float,
              expires_at: float) -> bool:
        """Expire the user's earlier pending codes and record ``code``; False (and nothing
        changed) when the code is already taken."""
        with self.db.transaction():
            if self.db.one("SELECT 1 AS x FROM link_codes WHERE code = ?", (code,)):
                return False
            self.db.execute(
                "UPDATE link_codes SET status = 'expired' WHERE user_id = ? AND status = 'pending'",
                (user_id,),
            )
            self.db.execute(
                "INSERT INTO link_codes (code, user_id, account, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (code, user_id, account, at, expires_at),
            )
            return True

    def get(self, code: str) -> Row | None:
        return self.db.one("SELECT * FROM link_codes WHERE code = ?", (code,))

    def confirm(self, code: str, *, user_id: str, account: str, at: float) -> bool:
        """Compare-and-set a pending, unexpired code to confirmed by ``account``."""
        return self.db.execute(
            "UPDATE link_codes SET status = 'confirmed', redeemed_by_user = ?,"
            " redeemed_by_account = ?, redeemed_at = ? WHERE code = ? AND status = 'pending'"
            " AND expires_at > ?",
            (user_id, account, at, code, at),
        ) == 1

    def unmerged(self, user_id: str) -> list[Row]:
        """Confirmed links involving ``user_id`` (either side) whose merge has not run."""
        return self.db.query(
            "SELECT * FROM link_codes WHERE status = 'confirmed' AND merged_at IS NULL"
            " AND (redeemed_by_user = ? OR user_id = ?) ORDER BY redeemed_at",
            (user_id, user_id),
        )

    def mark_merged(self, code: str, *, at: float, report: str) -> None:
        self.db.execute(
            "UPDATE link_codes SET status = 'merged', merged_at = ?, merge_report = ?"
            " WHERE code = ? AND merged_at IS NULL",
            (at, report, code),
        )
