"""One FastAPI app factory for Modal, the emulator and the tests."""

from __future__ import annotations

import importlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from core.config import Settings
from core.lanes import install_default_executor
from core.platforms.registry import PLATFORMS
from functions.auth import ApiError, check_key, door_for
from functions.runtime import Runtime

log = logging.getLogger("iris.app")

MAX_BODY_BYTES = 10 * 1024 * 1024
# Paths that take more: inbound mail carries attachments (20 MB each, base64 on the wire).
BODY_LIMITS = {"/email/inbound": 32 * 1024 * 1024}


def _validation_message(exc: RequestValidationError) -> tuple[str, str | None]:
    first = exc.errors()[0] if exc.errors() else {}
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    param = ".".join(loc) or None
    if first.get("type") == "json_invalid":
        return "the request body is not valid JSON", None
    return f"{param or 'body'}: {first.get('msg', 'invalid request')}", param


class BodyTooLarge(StarletteHTTPException):
    """A body that passed MAX_BODY_BYTES while it streamed in."""

    def __init__(self, limit: int = MAX_BODY_BYTES) -> None:
        super().__init__(413, f"request body over {limit} bytes")
        self.limit = limit


class Guard:
    """Every request, before any route sees it: the API key of its door (``functions.auth``)
    is checked on the headers alone, then the body is counted as it arrives, declared
    (``Content-Length``) or chunked, and cut off past MAX_BODY_BYTES with a 413. A plain ASGI
    middleware: the decorator form (BaseHTTPMiddleware) costs about a millisecond per request
    on the webhook ack path."""

    def __init__(self, app: Any, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = BODY_LIMITS.get(scope["path"], MAX_BODY_BYTES)
        try:
            if door := door_for(scope["path"]):
                check_key(self.settings, door, scope["headers"])
            for name, value in scope["headers"]:
                if name == b"content-length" and value.isdigit() and int(value) > limit:
                    raise BodyTooLarge(limit)
        except (ApiError, BodyTooLarge) as refused:
            await _refuse(refused, scope, receive, send)
            return
        received = 0
        started = False

        async def counted() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        async def watched(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge as refused:  # raised outside a route's own error handling
            if not started:
                await _refuse(refused, scope, receive, send)


async def _refuse(refused: Exception, scope: Any, receive: Any, send: Any) -> None:
    error = refused if isinstance(refused, ApiError) else _too_large(
        getattr(refused, "limit", MAX_BODY_BYTES))
    await JSONResponse(error.body(), status_code=error.status)(scope, receive, send)


def _too_large(limit: int = MAX_BODY_BYTES) -> ApiError:
    return ApiError(413, f"request body over {limit} bytes", code="body_too_large")


class LazyDashboard:
    """The web dashboard (``functions.dashboard``), imported and built on the first ``/ui``
    request: its templates and pages never load on the webhook ack path."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.app is None:
            self.app = importlib.import_module("functions.dashboard.app").build(self.rt)
        await self.app(scope, receive, send)


def _bounded(lifespan: Any) -> Any:
    """``lifespan`` run with the loop's default executor made bounded, of daemon threads
    (``core.lanes``): the emulator and Modal's web function both start here."""

    @asynccontextmanager
    async def bounded(app: Any) -> AsyncIterator[None]:
        install_default_executor()
        if lifespan is None:
            yield
        else:
            async with lifespan(app):
                yield

    return bounded


def create_app(rt: Runtime, *, lifespan: Any = None) -> FastAPI:
    from functions.http_api import build_router

    app = FastAPI(
        title="Iris", docs_url=None, redoc_url=None, openapi_url=None,
        lifespan=_bounded(lifespan),
    )
    app.state.runtime = rt

    app.add_middleware(Guard, settings=rt.settings)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        message, param = _validation_message(exc)
        return JSONResponse(ApiError(400, message, param=param).body(), status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc, BodyTooLarge):
            error = _too_large()
            return JSONResponse(error.body(), status_code=error.status)
        error = ApiError(exc.status_code, str(exc.detail), code=f"http_{exc.status_code}")
        return JSONResponse(error.body(), status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        error = ApiError(500, "internal error; see the server log", code="internal_error")
        return JSONResponse(error.body(), status_code=500)

    @app.get("/healthz")
    async def healthz() -> dict[str, object]:
        return {"ok": True}

    app.include_router(build_router(rt))
    from functions.notifications_api import build_router as build_notifications_router

    app.include_router(build_notifications_router(rt))
    from functions.search_api import build_search_router

    app.include_router(build_search_router(rt))
    from functions.admin_api import build_admin_router

    app.include_router(build_admin_router(rt))
    from functions.event_hooks import build_router as build_event_hooks_router

    app.include_router(build_event_hooks_router(rt))
    app.mount("/ui", LazyDashboard(rt))
    for module in PLATFORMS.webhooks():  # each platform's inbound webhooks (its spec names them)
        app.include_router(importlib.import_module(module).build_router(rt))
    return app
