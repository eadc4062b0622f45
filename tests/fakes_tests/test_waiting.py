"""iris_testing.waiting: returns the first truthy value, names what it waited for on failure."""

import asyncio
import threading

import pytest

from iris_testing.waiting import WaitTimeout, until, wait_for_event, wait_until


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
