"""Admin search API: ``GET /api/users/{user}/sessions/search?q=…&limit=…`` (bearer
``IRIS_ADMIN_API_KEY``) returns a flat, ranked JSON list of message hits for one user.

``user`` is a user id, an account (``telegram:42``) or an HTTP API user name (``alice``, only
ever ``http:alice``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from core.lanes import blocking
from core.sessions.transfer import parse_time
from core.store.search import Filters
from functions.admin_api import api_user
from functions.auth import ApiError
from functions.runtime import Runtime

MAX_LIMIT = 100


def build_search_router(rt: Runtime) -> APIRouter:
    router = APIRouter()

    @router.get("/api/users/{user}/sessions/search")
    async def search_sessions(
        user: str,
        q: str = Query(min_length=1, max_length=2000),
        limit: int = Query(default=10, ge=1, le=MAX_LIMIT),
        session_id: str | None = None,
        role: str | None = Query(default=None, pattern="^(user|assistant|tool|system)$"),
        since: str | None = None,
        until: str | None = None,
    ) -> list[dict[str, Any]]:
        from core.search.engine import search_messages

        user_id = api_user(rt, user)
        try:
            start = parse_time(since, field="since") if since else None
            end = parse_time(until, field="until") if until else None
        except ValueError as exc:
            raise ApiError(400, str(exc), code="bad_time") from None
        scoped = None
        if session_id:
            scoped = rt.store.search.resolve_session(user_id, session_id)
            if scoped is None:
                raise ApiError(404, f"no session {session_id!r} for this user",
                               code="session_not_found")
        filters = Filters(session_id=scoped, role=role, since=start, until=end)
        hits = await blocking(
            "prompt", user_id, search_messages, rt.store, user_id, q, limit=limit,
            filters=filters, timezone=rt.settings.timezone, what="searching",
        )
        return [hit.to_json(rank) for rank, hit in enumerate(hits, 1)]

    return router
