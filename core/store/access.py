"""Account access rows: approval, failed code attempts and lockouts (``accounts``), and DM
pairing requests (``pairing_requests``). Keyed by platform account, not by user: these are
looked up before an account's user is trusted. The limits (how many failures, how long a code
lives) are ``core.identity``'s; this module only reads and writes rows."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.store.db import Database, Row


@dataclass(frozen=True)
class AccountState:
    account: str
    user_id: str
    platform: str
    approved_at: float | None
    approved_by: str | None
    failed_attempts: int
    locked_until: float | None

    @property
    def approved(self) -> bool:
        return self.approved_at is not None


class AccountStates:
    def __init__(self, db: Database):
        self.db = db

    def state(self, account: str) -> AccountState | None:
        row = self.db.one(
            "SELECT account, user_id, platform, approved_at, approved_by, failed_attempts,"
            " locked_until FROM accounts WHERE account = ?",
            (account,),
        )
        return AccountState(**row) if row else None

    def approve(self, account: str, by: str) -> None:
        self.db.execute(
            "UPDATE accounts SET approved_at = coalesce(approved_at, ?), approved_by ="
            " coalesce(approved_by, ?) WHERE account = ?",
            (self.db.clock.now(), by, account),
        )

    def revoke(self, account: str) -> bool:
        changed = self.db.execute(
            "UPDATE accounts SET approved_at = NULL, approved_by = NULL WHERE account = ?"
            " AND approved_at IS NOT NULL",
            (account,),
        )
        return changed == 1

    def count_failure(self, account: str, *, at: float, window: float) -> int:
        """Count a failed attempt at ``at`` (a count older than ``window`` starts again);
        returns the failures in the current window. Call inside a transaction."""
        self.db.execute(
            "UPDATE accounts SET"
            " failed_attempts = CASE WHEN first_failed_at IS NULL OR first_failed_at < ?"
            "   THEN 1 ELSE failed_attempts + 1 END,"
            " first_failed_at = CASE WHEN first_failed_at IS NULL OR first_failed_at < ?"
            "   THEN ? ELSE first_failed_at END"
            " WHERE account = ?",
            (at - window, at - window, at, account),
        )
        return int(self.db.scalar(
            "SELECT failed_attempts FROM accounts WHERE account = ?", (account,)
        ) or 0)

    def lock(self, account: str, *, until: float) -> None:
        self.db.execute(
            "UPDATE accounts SET locked_until = ?, failed_attempts = 0, first_failed_at = NULL"
            " WHERE account = ?",
            (until, account),
        )

    def clear_failures(self, account: str) -> None:
        self.db.execute(
            "UPDATE accounts SET failed_attempts = 0, first_failed_at = NULL, locked_until = NULL"
            " WHERE account = ?",
            (account,),
        )


class PairingRequests:
    """Rows of ``pairing_requests``; "pending" below means pending and unexpired at ``at``."""

    def __init__(self, db: Database):
        self.db = db

    def pending_for(self, account: str, *, at: float) -> Row | None:
        return self.db.one(
            "SELECT * FROM pairing_requests WHERE account = ? AND status = 'pending'"
            " AND expires_at > ? ORDER BY created_at DESC LIMIT 1",
            (account, at),
        )

    def pending_count(self, platform: str, *, at: float) -> int:
        return int(self.db.scalar(
            "SELECT count(*) FROM pairing_requests WHERE platform = ? AND status = 'pending'"
            " AND expires_at > ?",
            (platform, at),
        ))

    def oldest_pending(self, platform: str, *, at: float) -> Row | None:
        return self.db.one(
            "SELECT * FROM pairing_requests WHERE platform = ? AND status = 'pending'"
            " AND expires_at > ? ORDER BY created_at, rowid LIMIT 1",
            (platform, at),
        )

    def expire(self, code: str, *, by: str, at: float) -> bool:
        """Compare-and-set a pending code to expired now (``by`` says why)."""
        return self.db.execute(
            "UPDATE pairing_requests SET status = 'expired', decided_at = ?, decided_by = ?"
            " WHERE code = ? AND status = 'pending'",
            (at, by, code),
        ) == 1

    def code_taken(self, code: str) -> bool:
        found = self.db.one("SELECT 1 AS x FROM pairing_requests WHERE code = ?", (code,))
        return found is not None

    def add(
        self, code: str, *, user_id: str, account: str, platform: str, chat_id: str,
        thread_id: str | None, meta: dict[str, Any], display_name: str | None, at: float,
        expires_at: float,
    ) -> None:
        self.db.execute(
            "INSERT INTO pairing_requests (code, user_id, account, platform, chat_id,"
            " thread_id, meta, display_name, created_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (code, user_id, account, platform, chat_id, thread_id, json.dumps(meta),
             display_name, at, expires_at),
        )

    def get(self, code: str) -> Row | None:
        return self.db.one("SELECT * FROM pairing_requests WHERE code = ?", (code,))

    def all(self) -> list[Row]:
        return self.db.query("SELECT * FROM pairing_requests ORDER BY created_at DESC")

    def pending(self, *, at: float) -> list[Row]:
        return self.db.query(
            "SELECT * FROM pairing_requests WHERE status = 'pending' AND expires_at > ?"
            " ORDER BY created_at",
            (at,),
        )

    def approve(self, code: str, *, by: str, at: float) -> bool:
        """Compare-and-set a pending, unexpired code to approved; False if it was not."""
        return self.db.execute(
            "UPDATE pairing_requests SET status = 'approved', decided_at = ?, decided_by = ?"
            " WHERE code = ? AND status = 'pending' AND expires_at > ?",
            (at, by, code, at),
        ) == 1

    def approve_account(self, account: str, *, by: str, at: float) -> int:
        return self.db.execute(
            "UPDATE pairing_requests SET status = 'approved', decided_at = ?, decided_by = ?"
            " WHERE account = ? AND status = 'pending'",
            (at, by, account),
        )

    def revoke_account(self, account: str, *, by: str, at: float) -> int:
        return self.db.execute(
            "UPDATE pairing_requests SET status = 'revoked', decided_at = ?, decided_by = ?"
            " WHERE account = ? AND status = 'pending'",
            (at, by, account),
        )

    def revoke(self, code: str, *, by: str, at: float) -> bool:
        return self.db.execute(
            "UPDATE pairing_requests SET status = 'revoked', decided_at = ?, decided_by = ?"
            " WHERE code = ? AND status = 'pending'",
            (at, by, code),
        ) == 1
