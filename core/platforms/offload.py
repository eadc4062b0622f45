"""Formatting a long reply in a thread of its own pool, so the event loop keeps serving other
requests while a reply of tens of kilobytes is rendered and split. The pool is bounded and
used for nothing else: formatting cannot take the threads of file tools or prompt building,
and they cannot delay a reply's formatting."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

ON_LOOP_CHARS = 4096  # shorter replies are formatted in place: well under a millisecond
WORKERS = 2

log = logging.getLogger("iris.format")
_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="iris-format")
        return _pool


def _run(work: Callable[[str], T], text: str) -> T:
    log.debug("formatting %d characters off the loop", len(text))
    result = work(text)
    log.debug("formatted %d characters", len(text))
    return result


async def formatted(work: Callable[[str], T], text: str) -> T:
    """``work(text)``: in place for a short text, else in the formatting pool."""
    if len(text) <= ON_LOOP_CHARS:
        return work(text)
    return await asyncio.get_running_loop().run_in_executor(_executor(), _run, work, text)
