"""``iris cron …``: scheduled jobs: list, add, update, pause, resume, remove, run, runs, tick."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from core.errors import ConfigError, IrisUsageError, NotFound
from local_dev.clikit import (
    USER_HELP,
    friendly,
    opened,
    operator,
    resolve_user,
    settings_or_exit,
)

if TYPE_CHECKING:
    from core.scheduler.jobs import CronJobs

JOB_USER_HELP = ("The job's owner, to name a job by its name instead of its id "
                 "[default: http:$USER, as `iris chat`].")
DELIVER_HELP = ("Where results go: none, inbox (iris chat, GET /v1/notifications, the user's "
                "webhook), telegram, slack (the user's latest chat there), telegram:<chat_id>, "
                "slack:[<team>:]<channel> [default: the user's latest Telegram/Slack chat, else "
                "their inbox].")


def _jobs(store: Any) -> CronJobs:
    """The store's jobs (the scheduler, and croniter with it, is imported on first use)."""
    from core.scheduler.jobs import CronJobs

    return CronJobs(store)


@click.group("cron")
def cron_group() -> None:
    """Scheduled jobs: a prompt Iris runs on a schedule, delivering the answer to a chat.

    Jobs run on the minute tick (Modal's cron in the cloud, the ticker of `iris dev`
    locally, or `iris cron tick` by hand).

    \b
    Examples:
      iris cron add --user telegram:42 --schedule "weekdays at 9" \\
          --prompt "Summarise my open GitHub issues" --deliver telegram
      iris cron list --user telegram:42
      iris cron runs job_3fa9c2d1 --json
      iris cron pause job_3fa9c2d1
      iris cron run job_3fa9c2d1            (run it now and wait for the answer)
      iris cron tick                        (one tick by hand)
    """


def _owner(store: Any, job_ref: str, user_ref: str | None) -> str:
    if user_ref:
        return resolve_user(store, user_ref)
    owner = _jobs(store).owner_of(job_ref)
    if owner is not None:
        return owner
    try:
        return resolve_user(store, None)
    except NotFound:
        raise IrisUsageError(f"no job with id {job_ref!r}; to name another user's job by its "
                             "name, give --user") from None


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


@cron_group.command("list")
@click.option("--user", "user_ref", help=USER_HELP)
@click.option("--all", "all_users", is_flag=True, help="Every user's jobs.")
@click.option("--removed", is_flag=True, help="Include removed jobs.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def cron_list(user_ref: str | None, all_users: bool, removed: bool, as_json: bool) -> None:
    """A user's jobs with their schedule, next run, last run and target.

    Example: iris cron list --user telegram:42
    """
    from core.scheduler.render import job_json, job_line

    with opened() as (_, store):
        users = [u.id for u in store.users.list_all()] if all_users else [
            resolve_user(store, user_ref)]
        found = []
        for user_id in users:
            last = _jobs(store).last_runs(user_id)
            found += [(job, last.get(job.id))
                      for job in _jobs(store).list(user_id, include_removed=removed)]
        if as_json:
            _echo_json([job_json(job, run) for job, run in found])
            return
        if not found:
            click.echo("no jobs")
        for job, run in found:
            click.echo(job_line(job, run) + (f"  [user {job.user_id}]" if all_users else ""))


def job_options(fn: Any) -> Any:
    for option in reversed([
        click.option("--schedule", help='When, e.g. "every 15m", "daily at 09:00", "0 9 * * 1-5".'),
        click.option("--prompt", help="What Iris does on each run (self-contained)."),
        click.option("--name", help="A short name [default: the prompt's first words]."),
        click.option("--deliver", help=DELIVER_HELP),
        click.option("--repeat", type=click.IntRange(0), help="Run this many times (0: forever)."),
        click.option("--skill", "skills", multiple=True, help="A skill to load (repeatable)."),
        click.option("--model", help="A model for this job's runs (provider/model)."),
        click.option("--timezone", help="IANA timezone [default: the user's, else settings]."),
        click.option("--json", "as_json", is_flag=True, help="Print the job as JSON."),
    ]):
        fn = option(fn)
    return fn


def _actor(settings: Any, store: Any, user_id: str, deliver: str | None) -> Any:
    from core.model.routing import SettingsRouter
    from core.scheduler.manage import Actor, side_model
    from core.scheduler.targets import INBOX, NO_TARGET, latest_chat

    origin = NO_TARGET if deliver else (latest_chat(store, user_id) or INBOX)
    model = side_model(SettingsRouter(settings)) if settings.model else None
    return Actor(user_id=user_id, account=operator(), origin=origin, privileged=True, model=model)


@cron_group.command("add")
@click.option("--user", "user_ref", help=USER_HELP)
@job_options
@friendly
def cron_add(user_ref: str | None, schedule: str | None, prompt: str | None, name: str | None,
             deliver: str | None, repeat: int | None, skills: tuple[str, ...],
             model: str | None, timezone: str | None, as_json: bool) -> None:
    """Create a job; prints its id (details on stderr).

    Example: iris cron add --user alice --schedule "every 2 hours" --prompt "Check the build"
    """
    from core.scheduler.manage import create_job
    from core.scheduler.render import job_detail, job_json

    if not schedule or not prompt:
        raise IrisUsageError("iris cron add needs --schedule and --prompt")
    with opened() as (settings, store):
        user_id = resolve_user(store, user_ref, create=True)
        job = asyncio.run(create_job(
            store, settings, _actor(settings, store, user_id, deliver), prompt=prompt,
            schedule=schedule, name=name, repeat=repeat, deliver=deliver,
            skills=list(skills) or None, model=model, timezone=timezone,
        ))
        if as_json:
            _echo_json(job_json(job))
            return
        click.echo(job.id)
        click.echo(job_detail(job), err=True)


@cron_group.command("update")
@click.argument("job")
@click.option("--user", "user_ref", help=JOB_USER_HELP)
@job_options
@friendly
def cron_update(job: str, user_ref: str | None, schedule: str | None, prompt: str | None,
                name: str | None, deliver: str | None, repeat: int | None,
                skills: tuple[str, ...], model: str | None, timezone: str | None,
                as_json: bool) -> None:
    """Change a job; a new schedule or repeat count restarts its run plan from now.

    Example: iris cron update job_3fa9c2d1 --schedule "daily at 07:30"
    """
    from core.scheduler.manage import update_job
    from core.scheduler.render import job_detail, job_json

    with opened() as (settings, store):
        user_id = _owner(store, job, user_ref)
        updated = asyncio.run(update_job(
            store, settings, _actor(settings, store, user_id, deliver), job,
            prompt=prompt, schedule=schedule, name=name, repeat=repeat, deliver=deliver,
            skills=list(skills) if skills else None, model=model, timezone=timezone,
        ))
        click.echo(json.dumps(job_json(updated), indent=2) if as_json else job_detail(updated))


@cron_group.command("show")
@click.argument("job")
@click.option("--user", "user_ref", help=JOB_USER_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def cron_show(job: str, user_ref: str | None, as_json: bool) -> None:
    """A job's details. Example: iris cron show job_3fa9c2d1"""
    from core.scheduler.render import job_detail, job_json

    with opened() as (_, store):
        user_id = _owner(store, job, user_ref)
        found = _jobs(store).get(user_id, job, include_removed=True)
        last = _jobs(store).last_runs(user_id).get(found.id)
        click.echo(json.dumps(job_json(found, last), indent=2) if as_json else job_detail(found))


def _state_command(verb: str, summary: str) -> None:
    @cron_group.command(verb, help=f"{summary}\n\nExample: iris cron {verb} job_3fa9c2d1")
    @click.argument("job")
    @click.option("--user", "user_ref", help=JOB_USER_HELP)
    @friendly
    def change(job: str, user_ref: str | None) -> None:
        from core.scheduler import manage
        from core.scheduler.render import job_line

        with opened() as (_, store):
            user_id = _owner(store, job, user_ref)
            done = getattr(manage, f"{verb}_job")(store, user_id, job)
            if verb == "remove":
                click.echo(f"removed {done.id} “{done.name}” (its run history is kept)")
            else:
                click.echo(f"{verb}d: {job_line(done)}")


_state_command("pause", "Stop a job from running until it is resumed.")
_state_command("resume", "Run a paused job again from now on (missed slots are skipped).")
_state_command("remove", "Retire a job for good; it and its run history stay readable.")


@cron_group.command("runs")
@click.argument("job", required=False)
@click.option("--user", "user_ref", help="Whose runs (without JOB; default: http:$USER), or the "
              "job's owner when JOB is a name.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def cron_runs(job: str | None, user_ref: str | None, limit: int, as_json: bool) -> None:
    """A job's runs (or, without JOB, all of a user's latest runs), newest first: status
    (queued, running, ok, silent, failed, error), error and delivery state.

    Example: iris cron runs job_3fa9c2d1 --json
    """
    from core.scheduler.render import run_json, run_line

    with opened() as (_, store):
        if job is None:
            runs = _jobs(store).recent_runs(resolve_user(store, user_ref), limit=limit)
            empty = "no runs yet"
        else:
            user_id = _owner(store, job, user_ref)
            found = _jobs(store).get(user_id, job, include_removed=True)
            runs = _jobs(store).runs(user_id, found.id, limit=limit)
            empty = f"{found.id} has not run yet"
        zone = found.timezone if job is not None else "UTC"
        if as_json:
            _echo_json([run_json(run) for run in runs])
            return
        if not runs:
            click.echo(empty)
        for run in runs:
            click.echo(f"{run.job_id}  {run_line(run)}" if job is None else run_line(run, zone))


@contextmanager
def _runtime(at: datetime | None = None) -> Iterator[Any]:
    """A runtime for runs started here; with ``at``, its whole clock stands at that time."""
    from core.clock import ManualClock
    from functions.dispatch import LocalDispatcher
    from functions.runtime import compose

    settings = settings_or_exit()
    if not settings.model:
        raise ConfigError("IRIS_MODEL", "no model configured in this shell, so job runs here "
                          "would fail; set IRIS_MODEL, or leave the runs to the ticker of "
                          "`iris dev` (which may use its embedded model)")
    rt = compose(settings, dispatcher=LocalDispatcher(),
                 clock=ManualClock(at) if at is not None else None)
    try:
        yield rt
    finally:
        rt.close()


@cron_group.command("run")
@click.argument("job")
@click.option("--user", "user_ref", help=JOB_USER_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@friendly
def cron_run(job: str, user_ref: str | None, as_json: bool) -> None:
    """Run a job now (paused ones too), wait for its answer and delivery, print the run.

    Example: iris cron run job_3fa9c2d1
    """
    from core.scheduler.render import run_json, run_line
    from functions.cron import run_now

    with _runtime() as rt:
        user_id = _owner(rt.store, job, user_ref)

        async def go() -> Any:
            claimed = await run_now(rt, user_id, job)
            await rt.dispatcher.idle()
            return _jobs(rt.store).run(user_id, claimed.run_id)

        run = asyncio.run(go())
        if as_json:
            _echo_json(run_json(run))
        else:
            click.echo(run_line(run, _jobs(rt.store).get(user_id, run.job_id,
                                                       include_removed=True).timezone))
        if run.status == "failed":
            sys.exit(1)


@cron_group.command("tick")
@click.option("--at", "at_text", help="Tick as if it were this ISO time (UTC unless it has an "
              "offset): the whole tick (due jobs, their runs, the sweep) runs on that clock. "
              "For tests and catching up.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly
def cron_tick(at_text: str | None, as_json: bool) -> None:
    """One tick by hand: claim and run every due job (waiting for the answers and their
    delivery), then sweep stalled chats and due deliveries.

    Example: iris cron tick --json
    """
    from functions.tick import TickFailed, run_tick

    with _runtime(_parse_at(at_text)) as rt:

        async def go() -> Any:
            try:
                report = await run_tick(rt)
            except TickFailed as failed:
                report = failed.report
            await rt.dispatcher.idle()
            return report

        report = asyncio.run(go())
        _print_tick(rt.store, report, as_json)
        if report.errors or (report.cron is not None and report.cron.errors):
            sys.exit(1)


def _parse_at(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise IrisUsageError(f"--at: not an ISO time: {text!r} (e.g. 2026-12-01T09:00)") from None
    return at if at.utcoffset() is not None else at.replace(tzinfo=UTC)


def _print_tick(store: Any, report: Any, as_json: bool) -> None:
    from core.scheduler.render import run_json, run_line

    cron_report = report.cron
    runs = [_jobs(store).run(c.user_id, c.run_id) for c in cron_report.claimed] \
        if cron_report else []
    swept = report.sweep
    if as_json:
        _echo_json({
            "cron": {**cron_report.as_dict(), "runs": [run_json(r) for r in runs]}
            if cron_report else None,
            "sweep": swept.__dict__ if swept else None, "errors": report.errors,
        })
        return
    if cron_report is not None:
        click.echo(f"tick at {cron_report.at}: {cron_report.due} due, {len(runs)} ran, "
                   f"{len(cron_report.waiting)} waiting for their previous run")
        for run in runs:
            click.echo(f"  {run.job_id}: {run_line(run)}")
        for error in cron_report.errors:
            click.echo(f"  error: {error}", err=True)
    if swept is not None:
        click.echo(f"sweep: {swept.chats_resumed} chats resumed, {swept.deliveries_attempted} "
                   f"deliveries attempted, {swept.leases_expired} expired leases cleared")
    for error in report.errors:
        click.echo(f"error: {error}", err=True)


commands = [cron_group]
