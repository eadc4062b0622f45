"""The scheduler's tests fix time: the store runs on a clock that stands at NOW until moved."""

from __future__ import annotations

import pytest

from core.clock import ManualClock
from tests.clocks import NOW


@pytest.fixture
def clock():
    return ManualClock(NOW)
