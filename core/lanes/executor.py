"""The loop's default executor, bounded and made of daemon threads.

``loop.set_default_executor`` accepts only a ``ThreadPoolExecutor``; this is one in type, but
its work runs on a ``Pool`` whose threads are daemons, so neither ``asyncio.run``'s shutdown
nor the interpreter's exit waits for a thread stuck in a blocking call (the standard
executor joins its threads at exit, whatever they are blocked in).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from core.lanes.pool import Pool

T = TypeVar("T")

SHUTDOWN_GRACE = 2.0  # seconds shutdown(wait=True) gives running work


class BoundedExecutor(ThreadPoolExecutor):
    def __init__(self, pool: Pool) -> None:
        super().__init__(max_workers=1)  # starts no thread: every method below is the pool's
        self.pool = pool

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        return self.pool.submit("-default-", fn, *args, **kwargs).future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.pool.close(wait=wait, grace=SHUTDOWN_GRACE)
