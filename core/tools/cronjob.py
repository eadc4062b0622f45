"""``cronjob``: schedule automations that run on their own and report to a chat."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.contracts.dispatch import ChatRef
from core.contracts.toolkit import Tool, ToolContext
from core.errors import IrisError, ToolRetry
from core.identity.access import is_owner_account
from core.lanes import in_store_lane
from core.platforms.registry import PLATFORMS

if TYPE_CHECKING:
    from core.scheduler.jobs import CronJobs
    from core.scheduler.manage import Actor
    from core.store import Store

log = logging.getLogger("iris.cron")

# croniter and the scheduler load on the first call, not when the web container imports tools.
EXAMPLES = ('"every 15m", "daily at 09:00", "mondays 8:30", "0 9 * * 1-5", "in 2 hours" or an '
            "ISO time like 2026-12-01T09:00")

Action = Literal["create", "list", "update", "pause", "resume", "remove", "run"]


class CronjobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Action = Field(description="create | list | update | pause | resume | remove | run")
    job_id: str | None = Field(
        default=None, description="The job's id (job_…) or name: update, pause, resume, "
        "remove, run.")
    prompt: str | None = Field(
        default=None, description="create/update: what to do on each run. Runs see none of "
        "this conversation, so include everything needed (names, links, what to report).")
    schedule: str | None = Field(
        default=None, description=f"create/update: when it runs, e.g. {EXAMPLES}. A trailing "
        "IANA timezone (\"daily at 9 Europe/Berlin\") overrides the user's.")
    name: str | None = Field(default=None, description="A short name for the job.")
    repeat: int | None = Field(
        default=None, ge=0, description="Run this many times, then stop (0 or omitted: no "
        "limit; one-time schedules run once).")
    deliver: str | None = Field(
        default=None, description="Where results go: \"origin\" (this chat, the default), "
        "\"none\" (history only), \"telegram\"/\"slack\" (the user's latest chat there), or "
        "\"telegram:<chat_id>\", \"slack:<channel>\".")
    skills: list[str] | None = Field(
        default=None, description="Names of skills to load at each run.")
    model: str | None = Field(
        default=None, description="A model for this job's runs (provider/model); \"default\" "
        "to clear.")
    timezone: str | None = Field(
        default=None, description="IANA timezone for the schedule; defaults to the user's.")


def actor_for(ctx: ToolContext) -> Actor:
    from core.scheduler.manage import Actor, side_model
    from core.scheduler.targets import origin_of

    store = ctx.store
    owner = store.users.get(ctx.user_id).is_owner or is_owner_account(ctx.settings, ctx.account)
    return Actor(
        user_id=ctx.user_id, account=ctx.account,
        origin=origin_of(store, ctx.user_id, inbox_id=ctx.inbox_id, chat_key=ctx.chat_key),
        privileged=owner, model=side_model(ctx.services.router),
    )


def _jobs(store: Store) -> CronJobs:
    """The store's jobs (the scheduler, and croniter with it, is imported on first use)."""
    from core.scheduler.jobs import CronJobs

    return CronJobs(store)


class Cronjob(Tool):
    name = "cronjob"
    deferred = True
    brief = "schedule reminders and recurring tasks"
    description = (
        "Schedule tasks that run by themselves later or repeatedly (reminders, daily summaries, "
        "monitoring). Each run is a fresh turn with only the job's prompt, whose answer is sent "
        "to the chosen chat (this one by default). Answering exactly [SILENT] in a run sends "
        "nothing, for 'tell me only if something changed' jobs. Actions: create (prompt, "
        "schedule, optional name, repeat, deliver, skills, model), list, update (job_id + "
        "fields), pause, resume, remove, run (job_id; runs it now). Schedules: cron "
        "expressions, 'every 15m', 'daily at 09:00', 'mondays 8:30', 'in 2 hours', ISO times."
    )
    Args = CronjobArgs

    async def run(self, ctx: ToolContext, args: CronjobArgs) -> str:
        try:
            return await self._act(ctx, args)
        except ToolRetry:
            raise
        except IrisError as exc:
            raise ToolRetry(str(exc)) from None

    async def _act(self, ctx: ToolContext, args: CronjobArgs) -> str:
        from core.scheduler.manage import (
            create_job,
            pause_job,
            remove_job,
            resume_job,
            update_job,
        )
        from core.scheduler.render import job_detail, job_line

        store, user_id = ctx.store, ctx.user_id
        if args.action == "list":
            return await in_store_lane(user_id, _listing, store, user_id)
        in_run = PLATFORMS[ctx.platform].unattended
        if args.action == "create":
            if in_run:
                raise ToolRetry("a scheduled run cannot create jobs")
            if not args.prompt or not args.schedule:
                raise ToolRetry("create needs 'prompt' and 'schedule'")
            actor = await in_store_lane(user_id, actor_for, ctx)
            job = await create_job(
                store, ctx.settings, actor, prompt=args.prompt, schedule=args.schedule,
                name=args.name, repeat=args.repeat, deliver=args.deliver, skills=args.skills,
                model=args.model, timezone=args.timezone,
            )
            return f"Created:\n{job_detail(job)}"
        if not args.job_id:
            raise ToolRetry(f"{args.action} needs 'job_id' (see action=list)")
        if args.action == "update":
            actor = await in_store_lane(user_id, actor_for, ctx)
            job = await update_job(
                store, ctx.settings, actor, args.job_id, prompt=args.prompt,
                schedule=args.schedule, name=args.name, repeat=args.repeat,
                deliver=args.deliver, skills=args.skills, model=args.model,
                timezone=args.timezone,
            )
            return f"Updated:\n{job_detail(job)}"
        if args.action == "pause":
            job = await in_store_lane(user_id, pause_job, store, user_id, args.job_id)
            return f"Paused: {job_line(job)}"
        if args.action == "resume":
            job = await in_store_lane(user_id, resume_job, store, user_id, args.job_id)
            return f"Resumed: {job_line(job)}"
        if args.action == "remove":
            job = await in_store_lane(user_id, remove_job, store, user_id, args.job_id)
            return f"Removed {job.id} “{job.name}”; its run history is kept."
        if in_run:
            raise ToolRetry("a scheduled run cannot start other runs")
        return await start_run(ctx, args.job_id)


def _listing(store: Store, user_id: str) -> str:
    from core.scheduler.render import job_line

    jobs = _jobs(store).list(user_id)
    if not jobs:
        return "No scheduled jobs."
    last = _jobs(store).last_runs(user_id)
    return "\n".join(job_line(job, last.get(job.id)) for job in jobs)


async def start_run(ctx: ToolContext, ref: str) -> str:
    """A run now, dispatched at once (a failed dispatch leaves it to the next tick's sweep)."""
    from core.ids import new_id
    from core.scheduler.render import run_line
    from core.scheduler.runs import claim_manual

    claimed = await in_store_lane(ctx.user_id, claim_manual, ctx.store, ctx.settings,
                                  ctx.user_id, ref, owner=new_id("tool"))
    await ctx.services.dispatcher.drain(ChatRef(ctx.user_id, claimed.chat_key))

    def started() -> tuple[Any, Any]:
        jobs = _jobs(ctx.store)
        return jobs.get(ctx.user_id, claimed.job_id), jobs.run(ctx.user_id, claimed.run_id)

    job, run = await in_store_lane(ctx.user_id, started)
    return f"Started {run_line(run, job.timezone)}; the answer goes to {job.target.label}."
