"""Wall-clock time, injected. Everything that stores an instant or compares one with "now"
(leases, expiries, backoff, schedules, signature ages) asks the process's clock, which the
store carries; tests and benchmarks pass a ``ManualClock`` and move it themselves."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta


class Clock:
    """The system clock."""

    def now(self) -> float:
        """Seconds since the epoch."""
        return time.time()

    def utcnow(self) -> datetime:
        return datetime.fromtimestamp(self.now(), UTC)


SYSTEM_CLOCK = Clock()


class ManualClock(Clock):
    """A clock that stands still until told to move."""

    def __init__(self, at: datetime | float) -> None:
        self._lock = threading.Lock()
        self._at = _seconds(at)

    def now(self) -> float:
        with self._lock:
            return self._at

    def set(self, at: datetime | float) -> None:
        with self._lock:
            self._at = _seconds(at)

    def advance(self, by: timedelta | float) -> None:
        seconds = by.total_seconds() if isinstance(by, timedelta) else float(by)
        with self._lock:
            self._at += seconds


def _seconds(at: datetime | float) -> float:
    if isinstance(at, datetime):
        if at.tzinfo is None:
            raise ValueError("a ManualClock needs an aware datetime")
        return at.timestamp()
    return float(at)
