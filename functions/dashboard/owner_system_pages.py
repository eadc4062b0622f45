"""The owner's system pages (403 for everyone else): the platforms and their webhook state,
and ``iris doctor``'s checks run against this running app."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.dashboard.platforms import platform_states, telegram_webhook
from core.doctor.checks import check_configuration, environment_of
from core.doctor.report import Report
from core.platforms.telegram_webhook import FIX as TELEGRAM_FIX
from functions.dashboard.guard import owner, runtime
from functions.dashboard.web import page, render


async def platforms_page(request: Request) -> Response:
    seen = await run_in_threadpool(owner, request)
    rt = runtime(request)
    states = await run_in_threadpool(platform_states, rt.store, rt.senders)
    telegram = await telegram_webhook(rt.senders)
    return render(request, "owner_platforms.html", viewer=seen, states=states,
                  telegram=telegram, fix=TELEGRAM_FIX)


def doctor_page(request: Request, form: FormData | None) -> Response:
    seen = owner(request)
    rt = runtime(request)
    report = Report()
    check_configuration(report, rt.settings, environment_of(rt.settings), store=rt.store)
    return render(request, "owner_doctor.html", viewer=seen, findings=report.findings,
                  errors=len(report.errors),
                  warnings=sum(f.level == "warning" for f in report.findings))


def routes() -> list[Route]:
    return [
        Route("/owner/platforms", platforms_page, methods=["GET"]),
        Route("/owner/doctor", page(doctor_page), methods=["GET"]),
    ]
