"""The dashboard's ASGI app (built by ``functions.app.LazyDashboard`` on the first /ui
request): static files, the pages' routes, error pages."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from core.dashboard.imports import ImportJobs
from functions.dashboard import (
    chat_pages,
    cron_pages,
    history_pages,
    memory_pages,
    owner_pages,
    owner_system_pages,
    signin_pages,
    skill_import_pages,
    skills_pages,
    team_pages,
    usage_pages,
    workspace_pages,
)
from functions.dashboard.guard import SignInNeeded
from functions.dashboard.web import HERE, Headers, environment, render
from functions.runtime import Runtime


def build(rt: Runtime) -> Starlette:
    routes: list[BaseRoute] = [Mount("/static", StaticFiles(directory=HERE / "static"),
                                     name="static")]
    for module in (signin_pages, memory_pages, chat_pages, history_pages, cron_pages,
                   skills_pages, skill_import_pages, team_pages, usage_pages, workspace_pages,
                   owner_pages, owner_system_pages):
        routes.extend(module.routes())

    async def sign_in_needed(request: Request, exc: Exception) -> Response:
        return render(request, "signin_needed.html", status=401)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return render(request, "error.html", status=exc.status_code, message=exc.detail)

    app = Starlette(routes=routes, exception_handlers={
        SignInNeeded: sign_in_needed, HTTPException: http_error,
    })
    app.state.runtime = rt
    app.state.templates = environment()
    app.state.imports = ImportJobs()
    app.state.import_tasks = set()
    app.add_middleware(Headers)
    return app
