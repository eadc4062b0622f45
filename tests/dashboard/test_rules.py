"""The dashboard's small rules: schedule previews, search highlights, workspace paths, usage
per day."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.clock import ManualClock
from core.dashboard.highlight import pieces
from core.dashboard.schedules import preview
from core.dashboard.usage import usage_view
from core.dashboard.workspace import checked_path, crumbs
from core.errors import IrisUsageError
from core.messages import Usage

NOW = datetime(2031, 3, 4, 9, 30, tzinfo=UTC)


@pytest.fixture
def clock():
    return ManualClock(NOW)


def test_a_schedule_preview_says_it_in_words_with_the_next_runs():
    shown = preview("every weekday at 8:00", timezone="Europe/Berlin", now=NOW)
    assert shown.problem is None and "Monday" in shown.words and "Friday" in shown.words
    assert shown.runs == ["2031-03-05 08:00 Europe/Berlin", "2031-03-06 08:00 Europe/Berlin",
                          "2031-03-07 08:00 Europe/Berlin"]
    assert preview("whenever the moon is full", timezone="UTC", now=NOW).problem
    assert preview("2020-01-01T10:00", timezone="UTC", now=NOW).problem


def test_highlights_are_pieces_not_markup():
    assert pieces("Flights to <b>Lisbon</b> booked", "lisbon flight") == [
        ("Flights", True), (" to <b>", False), ("Lisbon", True), ("</b> booked", False)]
    assert pieces("nothing here", "") == [("nothing here", False)]


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../b", "a\\b", "a\x00b"])
def test_workspace_paths_stay_inside(bad):
    with pytest.raises(IrisUsageError):
        checked_path(bad)


def test_workspace_paths_and_crumbs():
    assert checked_path("") == "." and checked_path("/") == "."
    assert checked_path("notes//plan.md") == "notes/plan.md"
    assert crumbs("a/b") == [("workspace", "."), ("a", "a"), ("b", "a/b")]


def test_usage_per_day_on_the_store_clock(store, clock):
    alice = store.users.for_account("http:alice")
    bob = store.users.for_account("http:bob")
    clock.set(NOW - timedelta(days=2))
    store.usage.record(alice, Usage(model="m1", prompt_tokens=100, completion_tokens=20,
                                    cache_read_tokens=40, cost_usd=0.01),
                       session_id=None, inbox_id=None)
    clock.set(NOW)
    store.usage.record(alice, Usage(model="m2", prompt_tokens=50, completion_tokens=10),
                       session_id=None, inbox_id=None)
    store.usage.record(bob, Usage(model="m1", prompt_tokens=999), session_id=None, inbox_id=None)
    view = usage_view(store, alice)
    assert len(view.days) == 30 and view.days[-1].day == "2031-03-04"
    busy = {d.day: (d.tokens, d.cache_read, d.height) for d in view.days if d.tokens}
    assert busy == {"2031-03-02": (120, 40, 100.0), "2031-03-04": (60, 0, 50.0)}
    assert set(view.models) == {"m1", "m2"} and view.total.prompt_tokens == 150
    assert view.peak == 120
