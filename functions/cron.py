"""The cron tick: claim every due job run and dispatch its chat. ``functions.tick.run_tick`` calls
``tick`` every minute (Modal ``Cron``, the emulator's ticker, ``iris cron tick``), then sweeps.

A claim is one transaction (see ``core.scheduler.runs``), so overlapping ticks, in one process
or several containers, each run a slot at most once; a job whose previous run is still going
waits for it. Turns run in workers like any chat message; their results are read back from
the inbox entry and delivery row of each run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from core.contracts.dispatch import ChatRef
from core.ids import new_id
from core.lanes import in_store_lane
from core.scheduler.jobs import CronJobs
from functions.runtime import Runtime

if TYPE_CHECKING:
    from core.scheduler.runs import Claimed

log = logging.getLogger("iris.cron")

MAX_CLAIMS_PER_TICK = 500


@dataclass(frozen=True)
class ClaimedRun:
    run_id: str
    job_id: str
    user_id: str
    inbox_id: int


@dataclass
class CronTickReport:
    at: str
    due: int = 0
    claimed: list[ClaimedRun] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # jobs whose previous run is still going
    skipped: int = 0  # claimed by another tick meanwhile, or changed since
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "at": self.at, "due": self.due,
            "claimed": [run.__dict__ for run in self.claimed],
            "waiting": self.waiting, "skipped": self.skipped, "errors": self.errors,
        }


async def tick(rt: Runtime, *, now: datetime | None = None) -> CronTickReport:
    """Claim and dispatch every job due at ``now`` (default: the current time)."""
    from core.scheduler.runs import WAITING, claim_scheduled

    at = (now or rt.store.clock.utcnow()).astimezone(UTC)
    owner = new_id("tick")
    store = rt.store
    due = await in_store_lane(None, CronJobs(store).due, at.timestamp(),
                             limit=MAX_CLAIMS_PER_TICK)
    report = CronTickReport(at=at.isoformat(), due=len(due))
    for user_id, job_id in due:
        try:
            claimed = await in_store_lane(user_id, claim_scheduled, store, rt.settings, user_id,
                                          job_id, at=at, owner=owner)
        except Exception as exc:
            log.exception("cron job %s could not be claimed", job_id)
            report.errors.append(f"{job_id}: {type(exc).__name__}: {exc}")
            continue
        if claimed is None:
            report.skipped += 1
            continue
        if claimed == WAITING:
            report.waiting.append(job_id)
            continue
        assert not isinstance(claimed, str)
        report.claimed.append(
            ClaimedRun(claimed.run_id, claimed.job_id, claimed.user_id, claimed.inbox_id)
        )
        await _dispatch(rt, claimed, report)
    if report.claimed or report.errors:
        log.info("cron tick: %d due, %d claimed, %d waiting, %d skipped, %d errors",
                 report.due, len(report.claimed), len(report.waiting), report.skipped,
                 len(report.errors))
    return report


async def run_now(rt: Runtime, user_id: str, ref: str) -> ClaimedRun:
    """Run a job now (``iris cron run``), whatever its schedule or pause state."""
    from core.scheduler.runs import claim_manual

    claimed = claim_manual(rt.store, rt.settings, user_id, ref, owner=new_id("run"))
    report = CronTickReport(at=rt.store.clock.utcnow().isoformat())
    await _dispatch(rt, claimed, report)
    if report.errors:
        log.warning("run %s is recorded; the sweeper will start it: %s", claimed.run_id,
                    report.errors[0])
    return ClaimedRun(claimed.run_id, claimed.job_id, claimed.user_id, claimed.inbox_id)


async def _dispatch(rt: Runtime, claimed: Claimed, report: CronTickReport) -> None:
    """A failed dispatch loses nothing: the run's inbox entry stays pending for the sweeper."""
    try:
        await rt.dispatcher.drain(ChatRef(claimed.user_id, claimed.chat_key))
    except Exception as exc:
        log.exception("could not dispatch %s; the sweeper will", claimed.chat_key)
        problem = f"{type(exc).__name__}: {exc}"
        report.errors.append(f"dispatch {claimed.chat_key}: {problem}")
        CronJobs(rt.store).note(claimed.user_id, claimed.run_id,
                           f"dispatch failed ({problem}); the next tick's sweep starts it")
