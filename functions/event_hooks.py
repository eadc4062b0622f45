"""``POST /hooks/<id>``: event webhooks (``docs/webhooks.md``).

In order, before anything else happens: the endpoint is looked up by its unguessable id (404),
the body is read up to ``event_hook_max_bytes`` (413 on a larger ``Content-Length`` before one
byte is read, or as soon as the stream passes it), its signature is checked over the raw bytes
(401: nothing stored), and the endpoint's and its owner's runs of the last minute are counted
(429). Then the run is recorded once per delivery id, its chat dispatched, and 202 returned; the
turn runs in a worker, as the endpoint's owner only, and its answer goes to the endpoint's target.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from core.contracts.dispatch import ChatRef
from core.event_hooks.runs import start
from core.event_hooks.verify import Forged, verify
from functions.auth import ApiError
from functions.runtime import Runtime
from functions.webhooks import read_body

log = logging.getLogger("iris.event_hooks")

WINDOW = 60.0


def build_router(rt: Runtime) -> APIRouter:
    router = APIRouter()

    @router.post("/hooks/{hook_id}")
    async def event_hook(hook_id: str, request: Request) -> JSONResponse:
        store, settings = rt.store, rt.settings
        hook = store.event_hooks.lookup(hook_id)
        if hook is None:
            raise ApiError(404, "no such webhook", code="not_found")
        body = await read_body(request, settings.event_hook_max_bytes)
        headers = {k.lower(): v for k, v in request.headers.items()}
        now = store.clock.now()
        try:
            verified = verify(
                headers, body, hook.secret, now=now, window=settings.event_hook_replay_seconds
            )
        except Forged as forged:
            log.warning("event webhook %s: refused delivery: %s", hook.id, forged)
            raise ApiError(
                401, f"bad signature: {forged}", code="bad_signature", kind="authentication_error"
            ) from None
        since = now - WINDOW
        if (
            store.event_hooks.recent_runs(hook.user_id, hook.id, since)
            >= settings.event_hook_runs_per_minute
            or store.event_hooks.recent_runs(hook.user_id, None, since)
            >= settings.event_hook_user_runs_per_minute
        ):
            error = ApiError(
                429, "too many deliveries to this webhook; retry in a minute", code="rate_limited"
            )
            return JSONResponse(
                error.body(), status_code=429, headers={"Retry-After": str(int(WINDOW))}
            )
        started = start(
            store,
            hook,
            body.decode("utf-8", errors="replace"),
            scheme=verified.scheme,
            delivery_id=verified.delivery_id,
            event=headers.get("x-github-event"),
        )
        chat = ChatRef(hook.user_id, hook.chat_key)
        try:
            await rt.dispatcher.drain(chat)
        except Exception as exc:  # recorded: the sweeper starts it
            log.warning("event webhook %s: could not dispatch (%s); the sweeper will", hook.id, exc)
        status = "duplicate" if started.inbox_id is None else "accepted"
        return JSONResponse(
            {"status": status, "run_id": started.run_id, "delivery_id": verified.delivery_id},
            status_code=202,
        )

    return router
