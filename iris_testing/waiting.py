"""The one way tests and fakes wait for something to happen.

A test that waits names what it waits for; when the deadline passes it fails with that name and
with what it saw last, so a red run says what did not happen instead of "assert False".
Deadlines are generous upper bounds for a loaded machine, never a measure of speed: a condition
that holds returns at once, whatever the deadline.

    value = wait_until(lambda: store.inbox.get(uid, entry), "the entry to be stored")
    await until(lambda: job.runs, "the job's first run", seen=lambda: job.state)

To prove that something does *not* happen, wait for a positive signal that the moment has
passed (a later message answered, an event set by the code under test), then assert; never
sleep and look.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0
_FIRST_PAUSE = 0.002
_LONGEST_PAUSE = 0.1


class _Waitable(Protocol):
    def wait(self, timeout: float | None = ...) -> bool: ...


class WaitTimeout(AssertionError):
    """What was awaited did not happen within the deadline."""


def _failure(what: str, timeout: float, seen: Callable[[], object] | None,
             last: object) -> WaitTimeout:
    shown = last
    if seen is not None:
        try:
            shown = seen()
        except Exception as exc:  # the report must not hide the timeout
            shown = f"<seen() raised {exc!r}>"
    return WaitTimeout(f"waited {timeout:g} s for {what}; last seen: {shown!r}")


def _pauses() -> Callable[[], float]:
    pause = _FIRST_PAUSE

    def next_pause() -> float:
        nonlocal pause
        current = pause
        pause = min(pause * 2, _LONGEST_PAUSE)
        return current

    return next_pause


def wait_until(condition: Callable[[], T], what: str, *, timeout: float = DEFAULT_TIMEOUT,
               seen: Callable[[], object] | None = None) -> T:
    """``condition()``'s first truthy value, polled with a growing pause (2 ms to 100 ms).

    Raises ``WaitTimeout`` naming ``what`` and the last value (or ``seen()``) after
    ``timeout`` seconds. Exceptions from ``condition`` propagate: a broken check is a failure,
    not something to wait out.
    """
    deadline = time.monotonic() + timeout
    next_pause = _pauses()
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, seen, value)
        time.sleep(next_pause())


async def until(condition: Callable[[], T | Awaitable[T]], what: str, *,
                timeout: float = DEFAULT_TIMEOUT,
                seen: Callable[[], object] | None = None) -> T:
    """``wait_until`` for coroutines: ``condition`` may be a plain or an async callable, and
    the pause yields to the event loop."""
    deadline = time.monotonic() + timeout
    next_pause = _pauses()
    while True:
        value = condition()
        if isinstance(value, Awaitable):
            value = await value
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, seen, value)
        await asyncio.sleep(next_pause())


def wait_for_event(event: _Waitable, what: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Wait for a ``threading.Event`` (anything with ``wait(timeout) -> bool``) naming it.

    Polled with ``wait(0)`` and relative sleeps, not one ``wait(timeout)``: a timed wait is an
    absolute deadline on the monotonic clock, which libfaketime (CI's second pass) moves, so a
    wait meant to fail after a minute could last days.
    """
    wait_until(lambda: event.wait(0), what, timeout=timeout)


def answers(url: str, *, status: int = 200) -> bool:
    """Whether ``url`` answers ``status`` now; a refused or unanswered request is "not yet".

    A condition for ``wait_until``: ``wait_until(lambda: answers(f"{url}/healthz"), "…")``.
    """
    import httpx

    try:
        return httpx.get(url, timeout=5).status_code == status
    except httpx.HTTPError:
        return False


def within_growing_limit(run: Callable[[float], T], fits: Callable[[T], bool], what: str, *,
                         first: float = 1.0, last: float = 16.0) -> T:
    """``run(limit)``'s result once ``fits`` it, the time limit doubling from ``first`` to
    ``last`` seconds.

    For a test of a time limit that must also let the work reach a point first (print a line,
    then be cut off): a loaded machine may not reach that point within a short limit, so a
    result that does not fit is tried again with twice the limit instead of failing. A limit
    that never lets it fit (the line is lost at every length) fails, naming ``what`` and the
    last result; a passing run costs the first limit only.
    """
    limit = first
    while True:
        result = run(limit)
        if fits(result):
            return result
        if limit >= last:
            raise AssertionError(f"{what}: not seen with limits from {first:g} s to {last:g} s;"
                                 f" last result: {result!r}")
        limit = min(limit * 2, last)


async def within_growing_limit_async(run: Callable[[float], Awaitable[T]],
                                     fits: Callable[[T], bool], what: str, *,
                                     first: float = 1.0, last: float = 16.0) -> T:
    """``within_growing_limit`` for a coroutine function ``run``."""
    limit = first
    while True:
        result = await run(limit)
        if fits(result):
            return result
        if limit >= last:
            raise AssertionError(f"{what}: not seen with limits from {first:g} s to {last:g} s;"
                                 f" last result: {result!r}")
        limit = min(limit * 2, last)
