"""Helpers for the cron tests: create jobs at a chosen instant, tick minute by minute. The store
must run on a ``ManualClock`` (the ``clock`` fixture of these tests): the helpers move it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from core.scheduler.jobs import CronJobs, Job
from core.scheduler.manage import Actor, create_job
from core.scheduler.runs import Claimed, claim_scheduled

MINUTE = timedelta(minutes=1)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def make_job(store, settings, *, schedule: str, at: datetime, account: str = "http:alice",
             prompt: str = "say hi", owner: bool = False, **options) -> Job:
    store.clock.set(at)
    user_id = store.users.for_account(account)
    actor = Actor(user_id=user_id, account=account, privileged=owner)
    return asyncio.run(create_job(store, settings, actor, prompt=prompt, schedule=schedule,
                                  **options))


def finish(store, claimed: Claimed, reply: str = "done") -> None:
    """What a worker does when the run's turn ends (the run's turn itself is not under test)."""
    store.inbox.finish(claimed.user_id, claimed.inbox_id, status="done", session_id=None,
                       reply=reply)


def tick_through(store, settings, start: datetime, end: datetime, *,
                 complete: bool = True) -> list[tuple[str, datetime]]:
    """Tick every minute from ``start`` to ``end`` inclusive, as the minute cron does; returns
    (job id, tick time) for each run claimed. ``complete``: finish each run at once."""
    ran = []
    at = start
    while at <= end:
        store.clock.set(at)
        for user_id, job_id in CronJobs(store).due(at.timestamp()):
            claimed = claim_scheduled(store, settings, user_id, job_id, at=at, owner="test")
            if isinstance(claimed, Claimed):
                ran.append((job_id, at))
                if complete:
                    finish(store, claimed)
        at += MINUTE
    return ran


def times(ran: list[tuple[str, datetime]]) -> list[datetime]:
    return [at for _, at in ran]
