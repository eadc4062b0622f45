"""Per-account access state: approval, and a lockout after repeated failed code attempts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.store.access import AccountState

if TYPE_CHECKING:
    from core.store import Store

__all__ = ["AccountAccess", "AccountState", "LockedOut"]

MAX_FAILURES = 5
FAILURE_WINDOW = 3600.0
LOCKOUT_SECONDS = 3600.0


class LockedOut(IrisUsageError):
    """Too many failed code attempts from this account; it must wait."""


def clock(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%H:%M UTC")


class AccountAccess:
    """The lockout rules over the store's account rows (``store.access``: approval, state)."""

    def __init__(self, store: Store):
        self.rows = store.access
        self.store = store

    def check_not_locked(self, account: str) -> None:
        state = self.rows.state(account)
        if state and state.locked_until and state.locked_until > self.store.clock.now():
            raise LockedOut(
                f"too many failed code attempts from {account}; try again after "
                f"{clock(state.locked_until)}"
            )

    def record_failure(self, account: str) -> int:
        """Count a failed attempt; returns the attempts left before the lockout (0: locked)."""
        at = self.store.clock.now()
        with self.store.transaction():
            failures = self.rows.count_failure(account, at=at, window=FAILURE_WINDOW)
            if failures < MAX_FAILURES:
                return MAX_FAILURES - failures
            self.rows.lock(account, until=at + LOCKOUT_SECONDS)
            return 0

    def fail(self, account: str, message: str) -> IrisUsageError:
        """Record a failure and build the error to raise, naming the attempts left."""
        left = self.record_failure(account)
        if left == 0:
            return LockedOut(
                f"{message}. That was the {MAX_FAILURES}th failed attempt: {account} is locked "
                f"out for {int(LOCKOUT_SECONDS // 60)} minutes"
            )
        return IrisUsageError(f"{message} ({left} attempt{'s' if left != 1 else ''} left)")
