"""A bounded pool of daemon threads that is fair between users.

Work is queued per user and taken round robin; a user runs at most ``per_user`` jobs at once,
so a user over the cap waits only behind their own work. At most ``threads`` threads serve the
pool; they are daemon threads, started on demand and retired when idle, so the interpreter's
exit never waits on one.

A job that overruns its caller's deadline is given up: the caller gets ``TookTooLong`` at once,
the thread is left to finish (a thread blocked in a system call cannot be stopped) and no
longer counts as capacity, and a replacement may start. Given-up threads still count against
their user's cap until they return, and at most ``spare`` of them are replaced: past that the
pool runs on what is left, so a stuck pool is bounded at ``threads + spare`` threads.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from core.errors import TookTooLong

T = TypeVar("T")

IDLE_SECONDS = 30.0  # an idle thread retires after this long


@dataclass(eq=False)
class Job:
    user: str
    call: Callable[[], Any]
    future: Future[Any] = field(default_factory=Future)
    running: bool = False
    abandoned: bool = False


@dataclass(frozen=True)
class PoolState:
    """A snapshot for logs, tests and the doctor."""

    threads: int  # live threads counted as capacity
    idle: int
    stuck: int  # given up on, still running
    queued: int
    running: dict[str, int]  # by user, given-up jobs included
    given_up: int  # since the pool started


class Pool:
    def __init__(self, name: str, *, threads: int, per_user: int, spare: int) -> None:
        if threads < 1 or per_user < 1 or spare < 0:
            raise ValueError("a pool needs threads >= 1, per_user >= 1, spare >= 0")
        self.name = name
        self._limit, self._per_user, self._spare = threads, per_user, spare
        self._cond = threading.Condition()
        self._queues: dict[str, deque[Job]] = {}  # users with queued work, oldest first
        self._running: dict[str, int] = {}
        self._workers = 0
        self._idle = 0
        self._starting = 0  # threads started that have not asked for work yet
        self._stuck = 0
        self._given_up = 0
        self._serial = 0
        self._closed = False

    def resize(self, *, threads: int, per_user: int, spare: int) -> None:
        with self._cond:
            self._limit, self._per_user, self._spare = threads, per_user, spare
            self._cond.notify_all()

    def submit(self, user: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Job:
        def call() -> T:
            return fn(*args, **kwargs)

        job = Job(user=user, call=call)
        with self._cond:
            if self._closed:
                raise RuntimeError(f"the {self.name} pool is shut down")
            self._queues.setdefault(user, deque()).append(job)
            self._start_if_needed()
            self._cond.notify_all()
        return job

    async def run(self, user: str, fn: Callable[..., T], *args: Any, timeout: float | None,
                  what: str, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a thread of this pool, as ``user``'s work; gives up with
        ``TookTooLong`` after ``timeout`` seconds (queueing included)."""
        job = self.submit(user, fn, *args, **kwargs)
        waiter = asyncio.wrap_future(job.future)
        try:
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
        except asyncio.CancelledError:
            self.withdraw(job)  # still queued: it never runs; running: it finishes unseen
            raise
        if not done:
            self.give_up(job)
            waiter.cancel()
            raise TookTooLong(what, timeout or 0.0)
        result: T = waiter.result()
        return result

    def call(self, user: str, fn: Callable[..., T], *args: Any, timeout: float | None,
             what: str, **kwargs: Any) -> T:
        """``run`` for callers that are threads themselves (the CLI)."""
        job = self.submit(user, fn, *args, **kwargs)
        try:
            result: T = job.future.result(timeout)
        except TimeoutError:
            self.give_up(job)
            raise TookTooLong(what, timeout or 0.0) from None
        return result

    def withdraw(self, job: Job) -> bool:
        """Drop ``job`` if it is still queued; whether it was."""
        with self._cond:
            if not job.future.cancel():
                return False
            queue = self._queues.get(job.user)
            if queue is not None and job in queue:
                queue.remove(job)
                if not queue:
                    del self._queues[job.user]
            return True

    def give_up(self, job: Job) -> None:
        """Stop waiting for ``job``: dropped if still queued, abandoned if running."""
        with self._cond:
            if self.withdraw(job) or job.future.done() or job.abandoned or not job.running:
                return
            job.abandoned = True
            self._workers -= 1
            self._stuck += 1
            self._given_up += 1
            self._start_if_needed()

    def close(self, *, wait: bool, grace: float = 2.0) -> None:
        """Refuse new work, drop what is queued, and (``wait``) give running work up to
        ``grace`` seconds; threads stuck past that are left behind (they are daemons)."""
        with self._cond:
            self._closed = True
            for queue in self._queues.values():
                for job in queue:
                    job.future.cancel()
            self._queues.clear()
            self._cond.notify_all()
            if wait:
                deadline = time.monotonic() + grace
                while (sum(self._running.values()) - self._stuck > 0
                       and (left := deadline - time.monotonic()) > 0):
                    self._cond.wait(left)

    def state(self) -> PoolState:
        with self._cond:
            return PoolState(
                threads=self._workers, idle=self._idle, stuck=self._stuck,
                queued=sum(len(q) for q in self._queues.values()),
                running=dict(self._running), given_up=self._given_up,
            )

    def _has_runnable(self) -> bool:
        return any(self._running.get(user, 0) < self._per_user for user in self._queues)

    def _runnable(self) -> int:
        """Queued jobs that could start now, each user's cap applied (lock held)."""
        return sum(min(len(queue), self._per_user - self._running.get(user, 0))
                   for user, queue in self._queues.items()
                   if self._running.get(user, 0) < self._per_user)

    def _start_if_needed(self) -> None:
        """Start a thread when runnable work outnumbers the threads that will take it: the idle
        ones (counted idle until they wake) and those started but not serving yet (lock held).
        A burst submitted while one thread is idle gets a thread per job, not that one."""
        if self._closed or self._runnable() <= self._idle + self._starting:
            return
        if self._workers >= self._limit or self._workers + self._stuck >= self._limit + self._spare:
            return
        self._workers += 1
        self._starting += 1
        self._serial += 1
        threading.Thread(target=self._serve, name=f"iris-{self.name}-{self._serial}",
                         daemon=True).start()

    def _take(self) -> Job | None:
        """The oldest job of the first user (round robin) under their cap (lock held)."""
        for user in list(self._queues):
            if self._running.get(user, 0) >= self._per_user:
                continue
            queue = self._queues.pop(user)
            job = queue.popleft()
            if queue:
                self._queues[user] = queue  # to the back: the next user goes first
            if job.future.set_running_or_notify_cancel():
                job.running = True
                self._running[user] = self._running.get(user, 0) + 1
                return job
            return self._take()  # cancelled while queued: look again
        return None

    def _serve(self) -> None:
        with self._cond:
            self._starting -= 1
        while (job := self._next()) is not None:
            try:
                result = job.call()
            except BaseException as exc:  # handed to the caller, like ThreadPoolExecutor
                job.future.set_exception(exc)
            else:
                job.future.set_result(result)
                del result
            serve_on = self._finished(job)
            del job  # an idle thread keeps nothing of its last call alive (a whole runtime)
            if not serve_on:
                return

    def _next(self) -> Job | None:
        with self._cond:
            while True:
                if self._closed or self._workers > self._limit:
                    self._workers -= 1
                    return None
                job = self._take()
                if job is not None:
                    return job
                self._idle += 1
                woken = self._cond.wait(IDLE_SECONDS)
                self._idle -= 1
                if not woken and not self._has_runnable():
                    self._workers -= 1
                    return None

    def _finished(self, job: Job) -> bool:
        """Count ``job`` done; whether its thread serves on (lock taken here)."""
        with self._cond:
            left = self._running[job.user] - 1
            if left:
                self._running[job.user] = left
            else:
                del self._running[job.user]
            self._cond.notify_all()
            if not job.abandoned:
                return True
            self._stuck -= 1  # back from being stuck: serve again if there is room
            if self._closed or self._workers >= self._limit:
                return False
            self._workers += 1
            return True
