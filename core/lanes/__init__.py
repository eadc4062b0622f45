"""Lanes: the process's bounded thread pools for blocking work, one per purpose.

Nothing that can block (a file, a parser, a scan, a database read on a slow disk) shares one
pool with everything else: each purpose has its lane (``core.lanes.pool.Pool``), fair between
users (at most ``pool_per_user`` jobs of one user run at once in a lane), bounded
(``pool_threads``, plus at most ``pool_spare_threads`` replacements for threads given up on),
and every call has a deadline (``blocking_timeout``; skill imports ``skill_import_timeout``)
after which the caller gets ``core.errors.TookTooLong``. Threads are daemons: exit never waits
for a stuck one. The loop's default executor (what ``asyncio.to_thread`` uses) is replaced by
a bounded daemon pool too (``install_default_executor``).

    text = await blocking("parse", user_id, parse_mail, raw, what="reading the email")

Lanes are a process resource, like the threads they hold: ``configure(settings)`` (called by
``functions.runtime.compose``) sets their limits for the whole process.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from core.lanes.executor import BoundedExecutor
from core.lanes.pool import Pool, PoolState

if TYPE_CHECKING:
    from core.config import Settings

T = TypeVar("T")

Lane = Literal["prompt", "checks", "parse", "skills", "io", "store"]
"""prompt: building system prompts, ranking skills; checks: command and /stop checks, security
scans; parse: untrusted bytes (email); skills: skill imports and edits; io: object store, mail
and platform sends, lookups; store: database calls made from the event loop
(``in_store_lane``)."""

LANES: tuple[Lane, ...] = get_args(Lane)
SYSTEM = "-system-"  # the user key of work done for nobody in particular (sweeps, lookups)
DEFAULT_EXECUTOR_THREADS = 16
REMOTE_STORE_THREADS_PER_POOL_THREAD = 2  # see limits_from


@dataclass(frozen=True)
class Limits:
    threads: int = 16
    per_user: int = 2
    spare: int = 32
    timeout: float = 120.0


_DEFAULTS: dict[Lane, Limits] = {lane: Limits() for lane in LANES}
_DEFAULTS["skills"] = Limits(threads=4, per_user=1, spare=8, timeout=600.0)

_lock = threading.Lock()
_limits: dict[Lane, Limits] = dict(_DEFAULTS)
_pools: dict[Lane, Pool] = {}


def limits_from(settings: Settings) -> dict[Lane, Limits]:
    common = Limits(threads=settings.pool_threads, per_user=settings.pool_per_user,
                    spare=settings.pool_spare_threads, timeout=settings.blocking_timeout)
    found: dict[Lane, Limits] = {lane: common for lane in LANES}
    found["skills"] = Limits(threads=max(1, settings.pool_threads // 4), per_user=1,
                             spare=max(1, settings.pool_spare_threads // 4),
                             timeout=settings.skill_import_timeout)
    if settings.db_is_remote:
        # Over a remote database the store lane's threads wait on the network, one Hrana
        # link each: with 16 of them, 50 users' first messages queued for threads (40 ms per
        # round trip: 10-12 turns/s, p99 4-5 s); with 32, 16.6 turns/s and p99 3.0 s; 48
        # gave little more (bench/many_users.py, docs/benchmarks.md). A file database has one
        # connection behind a lock: more threads there would only wait for it.
        found["store"] = Limits(threads=REMOTE_STORE_THREADS_PER_POOL_THREAD
                                * settings.pool_threads, per_user=settings.pool_per_user,
                                spare=settings.pool_spare_threads,
                                timeout=settings.blocking_timeout)
    return found


def configure(settings: Settings) -> None:
    """Set every lane's limits from ``settings`` (pools already running are resized)."""
    with _lock:
        _limits.update(limits_from(settings))
        for lane, running in _pools.items():
            wanted = _limits[lane]
            running.resize(threads=wanted.threads, per_user=wanted.per_user, spare=wanted.spare)


def limits(lane: Lane) -> Limits:
    with _lock:
        return _limits[lane]


def pool(lane: Lane) -> Pool:
    with _lock:
        found = _pools.get(lane)
        if found is None:
            wanted = _limits[lane]
            found = _pools[lane] = Pool(lane, threads=wanted.threads, per_user=wanted.per_user,
                                        spare=wanted.spare)
        return found


async def blocking(lane: Lane, user_id: str | None, fn: Callable[..., T], *args: Any,
                   what: str, timeout: float | None = None, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in ``lane`` as ``user_id``'s work (None: the system's), given
    up with ``TookTooLong`` after ``timeout`` (default: the lane's) seconds."""
    return await pool(lane).run(user_id or SYSTEM, fn, *args, what=what,
                                timeout=limits(lane).timeout if timeout is None else timeout,
                                **kwargs)


async def in_store_lane(user_id: str | None, fn: Callable[..., T], /, *args: Any,
                        **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, a function that calls the database, in the ``store`` lane:
    the event loop (webhook acks, ``/healthz``, other users' turns) never waits for a round
    trip, a retry's pause or a hung request. ``user_id``: whose work it is (fairness)."""
    return await blocking("store", user_id, partial(fn, *args, **kwargs), what="a database call")


def blocking_sync(lane: Lane, user_id: str | None, fn: Callable[..., T], *args: Any, what: str,
                  timeout: float | None = None, **kwargs: Any) -> T:
    """``blocking`` for a caller without an event loop (the CLI)."""
    return pool(lane).call(user_id or SYSTEM, fn, *args, what=what,
                           timeout=limits(lane).timeout if timeout is None else timeout,
                           **kwargs)


def states() -> dict[str, PoolState]:
    with _lock:
        running = dict(_pools)
    return {lane: found.state() for lane, found in running.items()}


def install_default_executor(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Make ``loop``'s (default: the running loop's) default executor a bounded pool of
    daemon threads, so what still uses ``asyncio.to_thread`` cannot grow without bound and
    never holds up the exit; once per loop."""
    loop = loop or asyncio.get_running_loop()
    if isinstance(getattr(loop, "_default_executor", None), BoundedExecutor):
        return
    loop.set_default_executor(BoundedExecutor(
        Pool("default", threads=DEFAULT_EXECUTOR_THREADS, per_user=DEFAULT_EXECUTOR_THREADS,
             spare=0)))


__all__ = ["LANES", "SYSTEM", "Lane", "Limits", "Pool", "PoolState", "blocking", "blocking_sync",
           "configure", "in_store_lane", "install_default_executor", "limits", "pool", "states"]
