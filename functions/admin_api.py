"""Admin API for users and memory (bearer ``IRIS_ADMIN_API_KEY``).

- ``GET  /api/users``: every user with its accounts and memory use.
- ``GET  /api/users/{user}/memory``: both stores, entry by entry, with provenance and the
  scanner's verdict.
- ``GET  /api/users/{user}/memory/archive?q=&limit=``: archived entries (searched with ``q``).
- ``POST /api/users/{user}/memory``: ``{"operations": [...]}`` or one ``action``; all or none.
- ``POST /api/users/{user}/memory/restore``: ``{"id": "arc_…"}``.

``{user}`` is a user id (``usr_…``), a linked account (``telegram:42``, ``slack:T1/U9``,
``http:alice``) or an HTTP API user name (``alice``, which means ``http:alice`` and nothing
else). Each call reads or writes that one user only.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from core.errors import IrisUsageError, NotFound
from core.ids import is_user_id, looks_like_user_id
from functions.auth import ApiError
from functions.runtime import Runtime

MAX_LIMIT = 200


class RestoreBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=100)


def _entry(entry: Any) -> dict[str, Any]:
    from core.memory.ops import default_scan
    from core.security import describe

    findings = default_scan(entry.content)
    return {
        "id": entry.id, "content": entry.content, "provenance": entry.provenance,
        "author": entry.author, "session_id": entry.session_id, "created_at": entry.created_at,
        "updated_at": entry.updated_at, "last_used_at": entry.last_used_at,
        "blocked": describe(findings) if findings else None,
    }


def _archived(item: Any) -> dict[str, Any]:
    return {
        "id": item.id, "target": item.target, "content": item.content, "reason": item.reason,
        "archived_at": item.archived_at, "archived_by": item.archived_by,
        "entry_id": item.entry_id, "provenance": item.provenance, "created_at": item.created_at,
        "restored_at": item.restored_at, "restored_as": item.restored_as,
    }


def _usage(usage: Any) -> dict[str, Any]:
    return {"chars": usage.chars, "limit": usage.limit, "percent": usage.percent,
            "entries": usage.entries, "header": usage.header()}


def api_user(rt: Runtime, ref: str) -> str:
    """The user ``ref`` names: an internal id, an account, or an HTTP API user name."""
    if is_user_id(ref) or ":" in ref:
        name = ref
    elif looks_like_user_id(ref):
        raise ApiError(400, f"{ref!r} is neither a user id nor a user name", code="bad_user")
    else:
        name = f"http:{ref}"
    try:
        return rt.store.users.resolve(name)
    except NotFound:
        raise ApiError(404, f"no user or account {ref!r}", code="user_not_found") from None


def build_admin_router(rt: Runtime) -> APIRouter:
    from core.memory.book import Limits, MemoryBook

    router = APIRouter()
    limits = Limits.from_settings(rt.settings)
    book = MemoryBook(rt.store)

    def resolve(user: str) -> str:
        return api_user(rt, user)

    def memory_body(user_id: str) -> dict[str, Any]:
        repo = rt.store.memory
        usage, stores = book.usage(user_id, limits), repo.snapshot(user_id)
        return {
            "user_id": user_id,
            "stores": {
                target: {"usage": _usage(usage[target]), "entries": [_entry(e) for e in entries]}
                for target, entries in stores.items()
            },
            "archived": repo.count_archive(user_id),
        }

    @router.get("/api/users")
    async def list_users() -> list[dict[str, Any]]:
        out = []
        for user in rt.store.users.list_all():
            usage = book.usage(user.id, limits)
            out.append({
                "id": user.id, "kind": user.kind, "display_name": user.display_name,
                "is_owner": user.is_owner, "merged_into": user.merged_into,
                "accounts": rt.store.users.accounts(user.id),
                "memory": {t: _usage(u) for t, u in usage.items()},
            })
        return out

    @router.get("/api/users/{user:path}/memory/archive")
    async def archive(
        user: str, q: str | None = Query(default=None, max_length=2000),
        limit: int = Query(default=50, ge=1, le=MAX_LIMIT),
        include_restored: bool = False,
    ) -> list[dict[str, Any]]:
        user_id = resolve(user)
        repo = rt.store.memory
        found = (
            repo.search_archive(user_id, q, limit=limit) if q and q.strip()
            else repo.list_archive(user_id, limit=limit, include_restored=include_restored)
        )
        return [_archived(a) for a in found]

    @router.post("/api/users/{user:path}/memory/restore")
    async def restore(user: str, body: RestoreBody) -> dict[str, Any]:
        user_id = resolve(user)
        try:
            result = book.restore(user_id, body.id, limits=limits, who="admin-api")
        except NotFound as exc:
            raise ApiError(404, str(exc), code="not_found") from None
        except IrisUsageError as exc:
            raise ApiError(409, str(exc), code="memory_refused") from None
        return {"notes": result.notes, **memory_body(user_id)}

    @router.get("/api/users/{user:path}/memory")
    async def memory(user: str) -> dict[str, Any]:
        return memory_body(resolve(user))

    @router.post("/api/users/{user:path}/memory")
    async def write(user: str, body: dict[str, Any]) -> dict[str, Any]:
        from core.memory.ops import Author
        from core.tools.memory import MemoryArgs
        from functions.bodies import parse_data

        user_id = resolve(user)
        args = parse_data(MemoryArgs, body, "a memory write", "invalid_memory_write")
        try:
            result = book.write(
                user_id, args.to_operations(), limits=limits,
                author=Author(provenance="user", who="admin-api"),
            )
        except IrisUsageError as exc:
            raise ApiError(400, str(exc), code="memory_refused") from None
        return {"notes": result.notes, **memory_body(user_id)}

    return router
