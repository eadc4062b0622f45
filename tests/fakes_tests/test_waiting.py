"""iris_testing.waiting: returns the first truthy value, names what it waited for on failure."""

import asyncio
import threading

import pytest

from iris_testing.waiting import (
    WaitTimeout,
    until,
    wait_for_event,
    wait_until,
    within_growing_limit,
    within_growing_limit_async,
)


def test_returns_the_first_truthy_value():
    calls = iter([0, None, "", "ready"])
    assert wait_until(lambda: next(calls), "the fourth value") == "ready"


def test_a_timeout_names_what_was_awaited_and_what_was_seen():
    with pytest.raises(WaitTimeout) as caught:
        wait_until(lambda: [], "the queue to fill", timeout=0, seen=lambda: {"queue": 0})
    assert "the queue to fill" in str(caught.value)
    assert "{'queue': 0}" in str(caught.value)


def test_errors_in_the_condition_are_not_waited_out():
    def broken():
        raise KeyError("missing")

    with pytest.raises(KeyError):
        wait_until(broken, "never")


def test_until_awaits_async_conditions_and_yields_to_the_loop():
    async def scenario():
        done = asyncio.Event()
        asyncio.get_running_loop().call_soon(done.set)

        async def check():
            return done.is_set() and "set"

        return await until(check, "the event")

    assert asyncio.run(scenario()) == "set"


def test_wait_for_event_fails_with_its_name():
    with pytest.raises(WaitTimeout, match="the worker's signal"):
        wait_for_event(threading.Event(), "the worker's signal", timeout=0)
    ready = threading.Event()
    ready.set()
    wait_for_event(ready, "a set event")


def test_a_growing_limit_doubles_until_the_result_fits_and_costs_nothing_more():
    tried: list[float] = []

    def run(limit: float) -> str:
        tried.append(limit)
        return "printed" if limit >= 2 else ""  # as if the machine needed two seconds

    assert within_growing_limit(run, bool, "the line", first=0.5) == "printed"
    assert tried == [0.5, 1.0, 2.0]


def test_a_growing_limit_that_never_fits_fails_naming_what_and_the_last_result():
    tried: list[float] = []

    def run(limit: float) -> str:
        tried.append(limit)
        return f"lost at {limit:g}"

    with pytest.raises(AssertionError, match=r"the line: not seen with limits from 1 s to 16 s;"
                                             r" last result: 'lost at 16'"):
        within_growing_limit(run, lambda out: False, "the line")
    assert tried == [1, 2, 4, 8, 16]


def test_the_async_growing_limit_awaits_each_run():
    async def run(limit: float) -> float:
        return limit

    found = asyncio.run(within_growing_limit_async(run, lambda limit: limit > 3, "four"))
    assert found == 4.0
