"""``/cron``: your scheduled jobs: list, show, runs, add, pause, resume, remove, run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.commands import CommandContext, CommandResult, command
from core.commands.approve import is_owner
from core.errors import IrisUsageError
from core.platforms.registry import PLATFORMS

if TYPE_CHECKING:
    from core.scheduler.jobs import CronJobs
    from core.scheduler.manage import Actor
    from core.store import Store

USAGE = (
    "Usage: /cron — list your jobs\n"
    "/cron show ID · /cron runs ID\n"
    "/cron add SCHEDULE | PROMPT   e.g. /cron add weekdays at 9 | summarise my open issues\n"
    "/cron pause ID · /cron resume ID · /cron remove ID · /cron run ID"
)
RUNS_SHOWN = 10


@command("cron", "your scheduled jobs: /cron [show|runs|add|pause|resume|remove|run] …")
async def cron(ctx: CommandContext, args: str) -> CommandResult:
    words = args.split(maxsplit=1)
    verb = words[0].lower() if words else "list"
    rest = words[1].strip() if len(words) > 1 else ""
    try:
        return CommandResult(reply=await _handle(ctx, verb, rest))
    except IrisUsageError as exc:
        return CommandResult(reply=f"{exc}")


def no_jobs(ctx: CommandContext) -> str:
    example = "/cron add every day at 9 | summarise the news"
    if ctx.settings.model_uses_tools:
        return f"No scheduled jobs. Ask me to schedule something, or: {example}"
    return (f"No scheduled jobs. Make one with /cron add SCHEDULE | PROMPT, e.g. {example}. "
            "This model cannot schedule by itself (it is offered no tools); with a real model "
            "(IRIS_MODEL) you can also just ask.")


def _jobs(store: Store) -> CronJobs:
    """The store's jobs (the scheduler, and croniter with it, is imported on first use)."""
    from core.scheduler.jobs import CronJobs

    return CronJobs(store)


async def _handle(ctx: CommandContext, verb: str, rest: str) -> str:
    from core.lanes import blocking
    from core.scheduler import manage
    from core.scheduler.render import job_detail

    if verb == "add":
        schedule, sep, prompt = rest.partition("|")
        if not sep or not schedule.strip() or not prompt.strip():
            return USAGE
        actor = await blocking("store", ctx.user_id, _actor, ctx, what="/cron add")
        job = await manage.create_job(ctx.store, ctx.settings, actor, prompt=prompt,
                                      schedule=schedule)
        return f"Scheduled:\n{job_detail(job)}"
    if verb == "run" and rest:
        return await _run_now(ctx, rest)
    return await blocking("store", ctx.user_id, _read_or_change, ctx, verb, rest,
                          what=f"/cron {verb}")


def _read_or_change(ctx: CommandContext, verb: str, rest: str) -> str:
    """The store-only verbs: list, show, runs, pause, resume, remove (in the ``store`` lane)."""
    from core.scheduler import manage
    from core.scheduler.render import job_detail, job_line, run_line

    store, user_id = ctx.store, ctx.user_id
    if verb == "list":
        jobs = _jobs(store).list(user_id)
        if not jobs:
            return no_jobs(ctx)
        last = _jobs(store).last_runs(user_id)
        return "\n".join(job_line(job, last.get(job.id)) for job in jobs)
    if verb not in ("show", "runs", "pause", "resume", "remove") or not rest:
        return USAGE
    if verb == "show":
        return job_detail(_jobs(store).get(user_id, rest, include_removed=True))
    if verb == "runs":
        job = _jobs(store).get(user_id, rest, include_removed=True)
        runs = _jobs(store).runs(user_id, job.id, limit=RUNS_SHOWN)
        if not runs:
            return f"{job.id} has not run yet."
        return "\n".join(run_line(run, job.timezone) for run in runs)
    if verb == "pause":
        return f"Paused: {job_line(manage.pause_job(store, user_id, rest))}"
    if verb == "resume":
        return f"Resumed: {job_line(manage.resume_job(store, user_id, rest))}"
    job = manage.remove_job(store, user_id, rest)
    return f"Removed {job.id} “{job.name}”; its run history is kept."


def _actor(ctx: CommandContext) -> Actor:
    from core.scheduler.manage import Actor, side_model
    from core.scheduler.targets import origin_of

    return Actor(user_id=ctx.user_id, account=ctx.account, privileged=is_owner(ctx),
                 origin=origin_of(ctx.store, ctx.user_id, chat_key=ctx.chat_key),
                 model=side_model(ctx.services.router))


async def _run_now(ctx: CommandContext, ref: str) -> str:
    from core.contracts.dispatch import ChatRef
    from core.ids import new_id
    from core.lanes import blocking
    from core.scheduler.runs import claim_manual

    if PLATFORMS[ctx.platform].unattended:
        return "A scheduled run cannot start other runs."
    claimed = await blocking("store", ctx.user_id, claim_manual, ctx.store, ctx.settings,
                             ctx.user_id, ref, owner=new_id("cmd"), what="/cron run")
    await ctx.services.dispatcher.drain(ChatRef(ctx.user_id, claimed.chat_key))
    job = await blocking("store", ctx.user_id, _jobs(ctx.store).get, ctx.user_id,
                         claimed.job_id, what="/cron run")
    return f"Running {job.id} “{job.name}” now ({claimed.run_id}); the answer goes to " \
        f"{job.target.label}."
