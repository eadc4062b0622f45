"""Creating and changing jobs: the one path behind the ``cronjob`` tool, ``/cron`` and
``iris cron``. Bad input raises IrisUsageError (ScheduleError for schedules) and changes nothing."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from core.errors import IrisError, IrisUsageError, NotFound
from core.model.choice import check_choice
from core.scheduler.jobs import CronJobs, Job
from core.scheduler.schedule import Schedule, ScheduleError, next_run, validate_timezone
from core.scheduler.targets import NO_TARGET, Target, resolve_deliver
from core.scheduler.understand import understand_schedule

if TYPE_CHECKING:
    from core.config import Settings
    from core.model.llm import Model
    from core.model.routing import ModelRouter
    from core.store import Store

MAX_JOBS_PER_USER = 50
MAX_NAME = 80
MAX_SKILLS = 5
MAX_REPEAT = 1_000_000


@dataclass(frozen=True)
class Actor:
    """Who asks, from where: the owning user, their account, the chat the request came from."""

    user_id: str
    account: str
    origin: Target = NO_TARGET
    privileged: bool = False  # the owner, or the operator at the CLI: may deliver anywhere
    model: Model | None = None  # the side model, for schedules the parser cannot read


def side_model(router: ModelRouter) -> Model | None:
    """The side model (for schedules in plain language), if one is configured."""
    try:
        return router.side()
    except IrisError:
        return None


def default_timezone(store: Store, settings: Settings, user_id: str) -> str:
    zone = store.users.get(user_id).timezone
    try:
        return validate_timezone(zone) if zone else settings.timezone
    except ScheduleError:
        return settings.timezone


async def create_job(
    store: Store, settings: Settings, actor: Actor, *, prompt: str | None, schedule: str | None,
    name: str | None = None, repeat: int | None = None, deliver: str | None = None,
    skills: list[str] | None = None, model: str | None = None, timezone: str | None = None,
) -> Job:
    """A new job. Its store reads and the write run in the ``store`` lane; only reading the
    schedule (which may ask a side model) waits on the event loop."""
    from core.lanes import blocking

    if not schedule or not schedule.strip():
        raise IrisUsageError("a job needs a schedule, e.g. \"every 15m\" or \"daily at 09:00\"")

    def check() -> tuple[str, str, str, datetime]:
        text = _prompt(settings, prompt)
        if CronJobs(store).count(actor.user_id) >= MAX_JOBS_PER_USER:
            raise IrisUsageError(f"you have {MAX_JOBS_PER_USER} jobs, the most allowed; remove "
                                 "one first")
        title = _name(name, text)
        _unique_name(store, actor.user_id, title)
        zone = _zone(timezone) if timezone else default_timezone(
            store, settings, actor.user_id)
        return text, title, zone, store.clock.utcnow()

    text, title, zone, now = await blocking("store", actor.user_id, check,
                                            what="checking a new job")
    parsed = await _schedule(schedule, zone, actor, now)

    def write() -> Job:
        target = resolve_deliver(store, actor.user_id, deliver, origin=actor.origin,
                                 privileged=actor.privileged)
        first = _first_run(parsed, now)
        return CronJobs(store).create(
            actor.user_id, name=title, prompt=text, schedule=parsed,
            schedule_text=" ".join(schedule.split()), target=target,
            skills=_skills(store, settings, actor.user_id, skills),
            model=_model(settings, actor, model),
            repeat=_repeat(repeat), next_run_at=first, created_by=actor.account,
        )

    return await blocking("store", actor.user_id, write, what="storing a new job")


async def update_job(
    store: Store, settings: Settings, actor: Actor, ref: str, *, prompt: str | None = None,
    schedule: str | None = None, name: str | None = None, repeat: int | None = None,
    deliver: str | None = None, skills: list[str] | None = None, model: str | None = None,
    timezone: str | None = None,
) -> Job:
    """Change what is given; a new schedule or repeat count restarts the job's run plan. The
    store work runs in the ``store`` lane, as in ``create_job``."""
    from core.lanes import blocking

    def check() -> tuple[Job, dict[str, object], datetime]:
        job = CronJobs(store).get(actor.user_id, ref)
        changes: dict[str, object] = {}
        if prompt is not None:
            changes["prompt"] = _prompt(settings, prompt)
        if name is not None:
            new_name = changes["name"] = _name(name, job.prompt)
            if new_name.lower() != job.name.lower():
                _unique_name(store, actor.user_id, new_name)
        if deliver is not None:
            changes["target"] = resolve_deliver(store, actor.user_id, deliver,
                                                origin=actor.origin, privileged=actor.privileged)
        if skills is not None:
            changes["skills"] = _skills(store, settings, actor.user_id, skills)
        if model is not None:
            changes["model"] = (None if model.strip().lower() in ("", "default")
                                else _model(settings, actor, model))
        return job, changes, store.clock.utcnow()

    job, changes, now = await blocking("store", actor.user_id, check, what="checking a job")
    if schedule is not None or timezone is not None or repeat is not None:
        zone = _zone(timezone) if timezone else job.timezone
        parsed = await _schedule(schedule, zone, actor, now) if schedule is not None else (
            dataclasses.replace(job.schedule, timezone=zone))
        changes.update(schedule=parsed, runs_done=0, repeat=_repeat(repeat, job.repeat),
                       next_run_at=_first_run(parsed, now))
        if schedule is not None:
            changes["schedule_text"] = " ".join(schedule.split())
    if not changes:
        raise IrisUsageError("nothing to change: give prompt, schedule, name, repeat, deliver, "
                             "skills, model or timezone")
    return await blocking("store", actor.user_id,
                          lambda: CronJobs(store).update(actor.user_id, job.id, **changes),
                          what="changing a job")


def pause_job(store: Store, user_id: str, ref: str) -> Job:
    job = CronJobs(store).get(user_id, ref)
    if job.state == "paused":
        return job
    return CronJobs(store).update(user_id, job.id, enabled=False)


def resume_job(store: Store, user_id: str, ref: str) -> Job:
    """Run again from now on: slots missed while paused are skipped."""
    job = CronJobs(store).get(user_id, ref)
    if job.state == "active":
        return job
    if job.repeat is not None and job.runs_done >= job.repeat:
        raise IrisUsageError(f"{job.id} already ran {job.runs_done} of {job.repeat} times; "
                             "give it a new repeat count or schedule to run it again")
    upcoming = next_run(job.schedule, store.clock.utcnow())
    if upcoming is None:
        raise IrisUsageError(f"{job.id} was a one-time job and its time has passed; give it a "
                             "new schedule to run it again")
    return CronJobs(store).update(user_id, job.id, enabled=True, next_run_at=upcoming.timestamp())


def remove_job(store: Store, user_id: str, ref: str) -> Job:
    """The job stops for good; it and its runs stay in the history."""
    return CronJobs(store).remove(user_id, CronJobs(store).get(user_id, ref).id)


async def _schedule(text: str, zone: str, actor: Actor, now: datetime) -> Schedule:
    try:
        parsed = await understand_schedule(text, timezone=zone, now=now,
                                           model=actor.model)
    except ScheduleError as error:
        raise IrisUsageError(str(error)) from None
    if parsed.kind == "interval" and parsed.anchor is not None:
        # Ticks come on the minute: anchor intervals there so runs are not a tick late.
        parsed = dataclasses.replace(parsed, anchor=parsed.anchor.replace(second=0))
    return parsed


def _zone(name: str) -> str:
    try:
        return validate_timezone(name)
    except ScheduleError as error:
        raise IrisUsageError(str(error)) from None


def _first_run(schedule: Schedule, now: datetime) -> float | None:
    upcoming = next_run(schedule, now)
    if upcoming is None:
        raise IrisUsageError("that time has already passed; give a future time")
    return upcoming.timestamp()


def _prompt(settings: Settings, prompt: str | None) -> str:
    text = (prompt or "").strip()
    if not text:
        raise IrisUsageError("a job needs a prompt: what Iris should do each time it runs")
    if len(text) > settings.max_message_chars:
        raise IrisUsageError(f"the prompt is {len(text):,} characters; the limit is "
                             f"{settings.max_message_chars:,}")
    return text


def _name(name: str | None, prompt: str) -> str:
    if name is not None and name.strip():
        title = " ".join(name.split())
        if len(title) > MAX_NAME:
            raise IrisUsageError(f"a job name has at most {MAX_NAME} characters")
        if title.startswith(("job_", "run_")):
            raise IrisUsageError("a job name must not look like an id (job_…, run_…)")
        return title
    words = re.sub(r"\s+", " ", prompt).strip().split(" ")
    title = " ".join(words[:8]) + ("…" if len(words) > 8 else "")
    return title if len(title) <= 48 else title[:47].rstrip() + "…"


def _unique_name(store: Store, user_id: str, name: str) -> None:
    try:
        existing = CronJobs(store).get(user_id, name)
    except NotFound:
        return
    except IrisUsageError:
        existing = None
    where = f" ({existing.id})" if existing else ""
    raise IrisUsageError(f"you already have a job named {name!r}{where}; update it or pick "
                         "another name")


def _repeat(repeat: int | None, current: int | None = None) -> int | None:
    if repeat is None:
        return current
    if repeat == 0:
        return None  # 0: forever
    if not 1 <= repeat <= MAX_REPEAT:
        raise IrisUsageError("repeat is how many times the job runs: 1 or more (0: forever)")
    return repeat


def _model(settings: Settings, actor: Actor, model: str | None) -> str | None:
    if model is None or not model.strip():
        return None
    return check_choice(settings, model, owner=actor.privileged)


def _skills(store: Store, settings: Settings, user_id: str, names: list[str] | None) -> list[str]:
    wanted = [n.strip() for n in (names or []) if n and n.strip()]
    if not wanted:
        return []
    if len(wanted) > MAX_SKILLS:
        raise IrisUsageError(f"a job loads at most {MAX_SKILLS} skills")
    from core.skills.library import SkillLibrary

    library = SkillLibrary(store, settings)
    missing = [n for n in wanted if library.find(user_id, n) is None]
    if missing:
        raise IrisUsageError(f"no skill named {', '.join(missing)} (see /skills)")
    return list(dict.fromkeys(wanted))
