"""The instant tests fix time at, for code that runs on a ``core.clock.ManualClock``."""

from __future__ import annotations

from datetime import UTC, datetime

NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)  # a Monday
