"""How often a request waiting for its turn reads the store (functions/http_api.py::
wait_finished): where the turn runs in this process its end wakes the waiter, so the reads are
a safety net and back off to 4 s; where the worker may be another container, every 0.5 s.

``asyncio.wait_for`` is replaced by one that records the pause it was given and returns at
once as a timeout, so the test needs no clock and no waiting."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from core.contracts.dispatch import Notifier
from functions import http_api


class LocalDispatcher:  # runs turns in this process (functions.runtime.NeedsRuntime)
    def bind(self, runtime: object) -> None:
        pass


class RelayDispatcher:  # hands turns to another container
    pass


def _waiter(dispatcher: object, reads_before_done: int):
    reads: list[int] = []

    def get(user_id: str, entry_id: int) -> SimpleNamespace:
        reads.append(entry_id)
        return SimpleNamespace(finished=len(reads) > reads_before_done)

    rt = SimpleNamespace(notifier=Notifier(), dispatcher=dispatcher,
                         store=SimpleNamespace(inbox=SimpleNamespace(get=get)))
    return rt, reads


@pytest.fixture
def pauses(monkeypatch):
    seen: list[float] = []

    async def timed_out(awaitable, timeout):
        seen.append(timeout)
        awaitable.close()
        raise TimeoutError

    monkeypatch.setattr(http_api, "asyncio", SimpleNamespace(wait_for=timed_out))
    return seen


@pytest.mark.parametrize(("dispatcher", "expected"), [
    (LocalDispatcher(), [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]),
    (RelayDispatcher(), [0.5] * 6),
])
def test_the_reads_back_off_only_where_the_turn_ends_here(pauses, dispatcher, expected):
    rt, reads = _waiter(dispatcher, reads_before_done=6)
    entry = asyncio.run(http_api.wait_finished(rt, "usr_1", 7, timeout=600))
    assert entry.finished
    assert len(reads) == 7
    assert pauses == expected
