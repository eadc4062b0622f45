"""What every dashboard page shares: templates, rendering, off-loop handlers, security headers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from core.errors import IrisUsageError, NotFound
from functions.dashboard.guard import SignInNeeded, Viewer

log = logging.getLogger("iris.dashboard")
HERE = Path(__file__).parent
MAX_FORM_FIELD = 200_000

# Scripts, styles and images come from this site only; nothing may frame the pages; a page's
# address (a sign-in link carries a token) is never sent to another site (same-origin: the
# browser still sends this site's own Origin with a form, which the CSRF check wants).
HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; object-src 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}

Handler = Callable[[Request, FormData | None], Response]


def when(at: float | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return datetime.fromtimestamp(at, UTC).strftime(fmt) + " UTC" if at else "–"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=jinja2.select_autoescape(default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )
    env.filters["when"] = when
    return env


def render(request: Request, template: str, *, status: int = 200, viewer: Viewer | None = None,
           **context: Any) -> HTMLResponse:
    env: jinja2.Environment = request.app.state.templates
    body = env.get_template(template).render(
        base=request.scope.get("root_path", "").rstrip("/"), viewer=viewer,
        path=request.url.path, **{"notice": None, **context},
    )
    return HTMLResponse(body, status_code=status)


def page(fn: Handler) -> Callable[[Request], Any]:
    """A route whose work (store reads, object reads, rules) runs off the event loop; a POST's
    form is read first."""

    async def endpoint(request: Request) -> Response:
        form = None
        if request.method == "POST":
            form = await request.form(max_files=4, max_fields=200, max_part_size=MAX_FORM_FIELD)
        try:
            return await run_in_threadpool(fn, request, form)
        except (HTTPException, SignInNeeded):
            raise
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None
        except IrisUsageError as exc:
            raise HTTPException(400, str(exc)) from None
        except Exception:
            log.exception("dashboard error on %s %s", request.method, request.url.path)
            raise HTTPException(500, "Something went wrong; the server log has the "
                                "details.") from None

    return endpoint


class Headers:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(k.encode(), v.encode()) for k, v in HEADERS.items()
                         if k.encode() not in present]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)
