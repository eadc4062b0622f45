"""Usage: tokens, cost and cache hits per day (an SVG bar chart) and per model."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.dashboard.usage import usage_view
from functions.dashboard.guard import own, runtime
from functions.dashboard.web import page, render


def usage_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    return render(request, "usage.html", viewer=seen,
                  view=usage_view(runtime(request).store, seen.user_id))


def routes() -> list[Route]:
    return [Route("/u/{user}/usage", page(usage_page), methods=["GET"])]
