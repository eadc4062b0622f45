"""Per-account access state: approval, and a lockout after repeated failed code attempts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from core.errors import IrisUsageError
from core.store.db import Database

MAX_FAILURES = 5
FAILURE_WINDOW = 3600.0
LOCKOUT_SECONDS = 3600.0


class LockedOut(IrisUsageError):
    """Too many failed code attempts from this account; it must wait."""


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


def clock(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%H:%M UTC")


class AccountAccess:
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

    def check_not_locked(self, account: str) -> None:
        state = self.state(account)
        if state and state.locked_until and state.locked_until > self.db.clock.now():
            raise LockedOut(
                f"too many failed code attempts from {account}; try again after "
                f"{clock(state.locked_until)}"
            )

    def record_failure(self, account: str) -> int:
        """Count a failed attempt; returns the attempts left before the lockout (0: locked)."""
        at = self.db.clock.now()
        with self.db.transaction():
            self.db.execute(
                "UPDATE accounts SET"
                " failed_attempts = CASE WHEN first_failed_at IS NULL OR first_failed_at < ?"
                "   THEN 1 ELSE failed_attempts + 1 END,"
                " first_failed_at = CASE WHEN first_failed_at IS NULL OR first_failed_at < ?"
                "   THEN ? ELSE first_failed_at END"
                " WHERE account = ?",
                (at - FAILURE_WINDOW, at - FAILURE_WINDOW, at, account),
            )
            failures = self.db.scalar(
                "SELECT failed_attempts FROM accounts WHERE account = ?", (account,)
            ) or 0
            if failures < MAX_FAILURES:
                return MAX_FAILURES - failures
            self.db.execute(
                "UPDATE accounts SET locked_until = ?, failed_attempts = 0, first_failed_at = NULL"
                " WHERE account = ?",
                (at + LOCKOUT_SECONDS, account),
            )
            return 0

    def clear_failures(self, account: str) -> None:
        self.db.execute(
            "UPDATE accounts SET failed_attempts = 0, first_failed_at = NULL, locked_until = NULL"
            " WHERE account = ?",
            (account,),
        )

    def fail(self, account: str, message: str) -> IrisUsageError:
        """Record a failure and build the error to raise, naming the attempts left."""
        left = self.record_failure(account)
        if left == 0:
            return LockedOut(
                f"{message}. That was the {MAX_FAILURES}th failed attempt: {account} is locked "
                f"out for {int(LOCKOUT_SECONDS // 60)} minutes"
            )
        return IrisUsageError(f"{message} ({left} attempt{'s' if left != 1 else ''} left)")
