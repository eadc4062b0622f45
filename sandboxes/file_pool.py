"""The threads local workspace file operations run on: a bounded pool of their own (never
``asyncio.to_thread``'s default pool, which the rest of the process shares), at most
``per_user`` operations of one user at a time, and a timeout on each.

A call that outlives its timeout is answered with ``FilesBusy`` at once; its thread is not
killable, so the user's slot stays taken until that thread returns. One user's stuck
operations therefore hold at most ``per_user`` threads, and every other user keeps the rest.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from sandboxes.base import FilesBusy

T = TypeVar("T")


@dataclass
class _User:
    running: int = 0
    waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = field(
        default_factory=list)


class FilePool:
    def __init__(self, *, workers: int = 16, per_user: int = 4, timeout: float = 30.0) -> None:
        if per_user < 1 or workers < per_user:
            raise ValueError("need workers >= per_user >= 1")
        self.workers = workers
        self.per_user = per_user
        self.timeout = timeout
        self._executor = ThreadPoolExecutor(max_workers=workers,
                                            thread_name_prefix="iris-workspace-files")
        self._lock = threading.Lock()
        self._users: dict[str, _User] = {}

    def running(self, user_id: str) -> int:
        with self._lock:
            user = self._users.get(user_id)
            return user.running if user else 0

    async def run(self, user_id: str, what: str, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` on a pool thread, counted against ``user_id``'s cap; ``FilesBusy``
        if no slot frees up, or the call does not end, within the timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        await self._acquire(user_id, loop, deadline, what)
        try:
            work: Future[T] = self._executor.submit(fn, *args)
        except BaseException:
            self._release(user_id)
            raise
        work.add_done_callback(lambda _: self._release(user_id))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(work),
                                          max(deadline - loop.time(), 0.001))
        except TimeoutError:
            raise FilesBusy(
                f"{what} did not finish within {self.timeout:g} s and was given up (the file "
                "may be on a stuck device, or be in use)") from None

    async def _acquire(self, user_id: str, loop: asyncio.AbstractEventLoop, deadline: float,
                       what: str) -> None:
        while True:
            with self._lock:
                user = self._users.setdefault(user_id, _User())
                if user.running < self.per_user:
                    user.running += 1
                    return
                waiter: asyncio.Future[None] = loop.create_future()
                user.waiters.append((loop, waiter))
            try:
                await asyncio.wait_for(waiter, max(deadline - loop.time(), 0.001))
            except TimeoutError:
                raise FilesBusy(
                    f"{what} could not start: {self.per_user} file operations of this user "
                    f"are still running after {self.timeout:g} s") from None
            finally:
                with self._lock:
                    if (loop, waiter) in user.waiters:
                        user.waiters.remove((loop, waiter))

    def _release(self, user_id: str) -> None:
        with self._lock:
            user = self._users[user_id]
            user.running -= 1
            waiters, user.waiters = user.waiters, []
            if not user.running and not waiters:
                del self._users[user_id]
        for loop, waiter in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_wake, waiter)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


_shared: FilePool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> FilePool:
    """The process' pool for local workspace files (made on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = FilePool()
        return _shared
