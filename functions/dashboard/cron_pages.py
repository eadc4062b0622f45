"""Cron: the user's jobs with their next runs, pause, resume, run now, and past runs with
their output."""

from __future__ import annotations

import anyio.from_thread
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.scheduler.jobs import CronJobs
from core.scheduler.manage import pause_job, resume_job
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
    return render(request, "cron.html", viewer=seen, notice=notice(request, seen), rows=rows,
                  runs=jobs.recent_runs(seen.user_id, limit=20))


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
        Route("/u/{user}/cron/{job}", page(cron_action), methods=["POST"]),
    ]
