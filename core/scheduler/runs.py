"""Claiming a job's run: one transaction records the run (unique per job and scheduled instant),
writes its inbox entry and moves the job's next run on with a compare-and-set, so two ticks, in
one process or many, never run one slot twice. A job missed while nothing ticked runs once: its
next run is computed from the tick's time, not from the missed slot.

The run is then an ordinary inbox entry in the job's own chat (``cron:<job id>``): a worker takes
the chat's lease, runs the turn, stores it, and delivers the reply to the job's target.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from core.errors import IrisUsageError
from core.messages import CronRun, InboundMessage
from core.scheduler.jobs import CronJobs, Job
from core.scheduler.outbound import SILENT
from core.scheduler.schedule import next_run
from core.scheduler.targets import latest_chat

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store

log = logging.getLogger("iris.cron")

WAITING = "waiting"  # the job's previous run has not finished: it runs once that one is done


@dataclass(frozen=True)
class Claimed:
    run_id: str
    job_id: str
    user_id: str
    chat_key: str
    inbox_id: int
    scheduled_for: float
    trigger: str


class _Lost(Exception):
    """Another claimant moved the job on inside our transaction: roll back."""


def is_due(job: Job, at: datetime) -> bool:
    return job.state == "active" and job.next_run_at is not None and (
        job.next_run_at <= at.timestamp()
    )


def claim_scheduled(
    store: Store, settings: Settings, user_id: str, job_id: str, *, at: datetime, owner: str,
) -> Claimed | str | None:
    """Claim the job's due run. None: not due (any more), or someone else claimed it; WAITING:
    its previous run is still going."""
    jobs = CronJobs(store)
    job = jobs.get(user_id, job_id, include_removed=True)
    if not is_due(job, at) or job.next_run_at is None:
        return None
    if jobs.unfinished_run(user_id, job_id) is not None:
        return WAITING
    slot = job.next_run_at
    runs_done = job.runs_done + 1
    following = None
    if job.repeat is None or runs_done < job.repeat:
        upcoming = next_run(job.schedule, at)
        following = upcoming.timestamp() if upcoming is not None else None
    text = run_text(store, settings, job, slot, "schedule")
    notify = _notify(store, job)
    try:
        with store.transaction():
            fresh = jobs.get(user_id, job_id, include_removed=True)
            if fresh.next_run_at != slot or fresh.updated_at != job.updated_at or not is_due(
                fresh, at
            ):
                return None
            run_id = jobs.add_run(user_id, job_id, scheduled_for=slot, trigger="schedule",
                                        owner=owner)
            if run_id is None:
                raise _Lost
            inbox_id = _enqueue(store, job, run_id, slot, "schedule", text, notify)
            if not jobs.advance(user_id, job_id, expected=slot, next_run_at=following,
                                      runs_done=runs_done, last_run_at=at.timestamp()):
                raise _Lost
    except _Lost:
        return None
    return Claimed(run_id, job_id, user_id, job.chat_key, inbox_id, slot, "schedule")


def claim_manual(store: Store, settings: Settings, user_id: str, ref: str, *,
                 owner: str) -> Claimed:
    """A run now, on request (``run``): any job that is not removed, paused ones included. It
    does not change the schedule or count towards ``repeat``."""
    jobs = CronJobs(store)
    job = jobs.get(user_id, ref)
    slot = store.clock.now()
    text = run_text(store, settings, job, slot, "manual")
    notify = _notify(store, job)
    with store.transaction():
        run_id = jobs.add_run(user_id, job.id, scheduled_for=slot, trigger="manual",
                                    owner=owner)
        if run_id is None:
            raise IrisUsageError(f"a run of {job.id} was started at this very moment; try again")
        inbox_id = _enqueue(store, job, run_id, slot, "manual", text, notify)
    return Claimed(run_id, job.id, user_id, job.chat_key, inbox_id, slot, "manual")


def run_text(store: Store, settings: Settings, job: Job, slot: float, trigger: str) -> str:
    """What the run's turn is asked. A prompt that is a slash command runs as that command."""
    if job.prompt.lstrip().startswith("/"):
        return job.prompt.strip()
    local = datetime.fromtimestamp(slot, UTC).astimezone(ZoneInfo(job.timezone))
    when = f"{local:%Y-%m-%d %H:%M} {job.timezone}"
    kind = "run requested now" if trigger == "manual" else f"run scheduled for {when}"
    header = (
        f"[Scheduled job “{job.name}” ({job.id}), {kind}. Your answer is sent to "
        f"{job.target.label}. Nobody is waiting to answer questions: do the task with what "
        f"you have. When the job says to stay quiet and there is nothing to report, answer "
        f"exactly {SILENT}.]"
    )
    parts = [header, *_skill_blocks(store, settings, job), job.prompt.strip()]
    return "\n\n".join(parts)


def _skill_blocks(store: Store, settings: Settings, job: Job) -> list[str]:
    if not job.skills:
        return []
    from core.skills.library import SkillLibrary

    library = SkillLibrary(store, settings)
    blocks = []
    for name in job.skills:
        try:
            if library.find(job.user_id, name) is None:
                blocks.append(f"(The skill {name} this job uses no longer exists.)")
                continue
            text = library.snapshot(job.user_id, name).text()
            library.record(job.user_id, [name], "used")
        except Exception as exc:
            log.warning("job %s: skill %s could not be loaded: %s", job.id, name, exc)
            blocks.append(f"(The skill {name} could not be loaded: {type(exc).__name__}. "
                          f"Try skill_view(name='{name}').)")
            continue
        blocks.append(f"Follow this skill for the job:\n<skill name=\"{name}\">\n{text}\n</skill>")
    return blocks


def _notify(store: Store, job: Job) -> dict[str, Any] | None:
    """Where to report a failure when the job's own target cannot receive pushes."""
    if job.target.deliverable:
        return None
    found = latest_chat(store, job.user_id)
    return found.to_dict() if found is not None else None


def _enqueue(store: Store, job: Job, run_id: str, slot: float, trigger: str, text: str,
             notify: dict[str, Any] | None) -> int:
    run = CronRun(
        job_id=job.id, run_id=run_id, name=job.name, trigger=trigger, scheduled_for=slot,
        target=job.target.to_dict(), notify=notify, model=job.model,
    )
    message = InboundMessage(
        platform="cron", chat_id=job.id, account=f"cron:{job.id}",
        platform_message_id=f"run:{run_id}", text=text, display_name=job.name, cron=run,
    )
    inbox_id = store.inbox.add(job.user_id, message)
    if inbox_id is None:
        raise RuntimeError(f"run {run_id} already has an inbox entry")
    CronJobs(store).attach_inbox(job.user_id, run_id, inbox_id)
    return inbox_id
