"""Cron: the user's jobs with their next runs, pause, resume, run now, past runs with their
output, and a new job with a preview of its schedule in words."""

from __future__ import annotations

from urllib.parse import urlencode

import anyio.from_thread
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.dashboard.schedules import preview
from core.errors import IrisUsageError
from core.scheduler.jobs import CronJobs
from core.scheduler.manage import (
    Actor,
    create_job,
    default_timezone,
    pause_job,
    resume_job,
    side_model,
)
from core.scheduler.render import when as local_when
from core.scheduler.schedule import describe
from functions.dashboard.guard import back, form_checked, notice, own, runtime
from functions.dashboard.web import page, render


def cron_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    jobs = CronJobs(runtime(request).store)
    listed = jobs.list(seen.user_id)
    last = jobs.last_runs(seen.user_id)
    rows = [{"job": j, "schedule": describe(j.schedule), "last": last.get(j.id),
             "next": local_when(j.next_run_at, j.timezone) if j.state == "active" else j.state}
            for j in listed]
    rt = runtime(request)
    zone = default_timezone(rt.store, rt.settings, seen.user_id)
    draft = {k: request.query_params.get(k, "")[:2000] for k in ("name", "prompt", "schedule",
                                                                   "deliver")}
    shown = preview(draft["schedule"], timezone=zone, now=rt.store.clock.utcnow()) \
        if draft["schedule"].strip() else None
    return render(request, "cron.html", viewer=seen, notice=notice(request, seen), rows=rows,
                  runs=jobs.recent_runs(seen.user_id, limit=20), draft=draft, preview=shown,
                  zone=zone)


def cron_create(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    form_checked(request, seen, form)
    assert form is not None
    rt = runtime(request)
    accounts = rt.store.users.accounts(seen.user_id)
    actor = Actor(user_id=seen.user_id, account=accounts[0] if accounts else "http:dashboard",
                  model=side_model(rt.router))
    fields = {k: str(form.get(k) or "").strip() for k in ("name", "prompt", "schedule",
                                                          "deliver")}
    try:
        job = anyio.from_thread.run(lambda: create_job(
            rt.store, rt.settings, actor, prompt=fields["prompt"] or None,
            schedule=fields["schedule"] or None, name=fields["name"] or None,
            deliver=fields["deliver"] or "none"))
    except IrisUsageError as exc:
        return back(request, seen, f"/u/{seen.user_id}/cron?" + urlencode(fields),
                    f"Not created: {exc}")
    return back(request, seen, f"/u/{seen.user_id}/cron",
                f"Created “{job.name}”: {describe(job.schedule)}, next run "
                f"{local_when(job.next_run_at, job.timezone)}.")


def cron_action(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    form_checked(request, seen, form)
    assert form is not None
    rt = runtime(request)
    job_id, action = request.path_params["job"], str(form.get("action") or "")
    if action == "pause":
        job = pause_job(rt.store, seen.user_id, job_id)
        message = f"Paused “{job.name}”."
    elif action == "resume":
        job = resume_job(rt.store, seen.user_id, job_id)
        message = f"Resumed “{job.name}”: next run {local_when(job.next_run_at, job.timezone)}."
    elif action == "run":
        from functions.cron import run_now

        claimed = anyio.from_thread.run(run_now, rt, seen.user_id, job_id)
        message = f"Started run {claimed.run_id}; its output appears below when it is done."
    else:
        raise HTTPException(400, f"unknown action {action!r}")
    return back(request, seen, f"/u/{seen.user_id}/cron", message)


def routes() -> list[Route]:
    return [
        Route("/u/{user}/cron", page(cron_page), methods=["GET"]),
        Route("/u/{user}/cron/new", page(cron_create), methods=["POST"]),
        Route("/u/{user}/cron/{job}", page(cron_action), methods=["POST"]),
    ]
