"""``session_search``: full-text search over every session of the user, the current one included,
and over archived memory entries."""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, Field

from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry
from core.messages import Message
from core.search.engine import search_messages
from core.search.grouping import group_hits, render_groups, render_message
from core.sessions.transfer import parse_time
from core.store.search import Filters

log = logging.getLogger("iris.tools.session_search")

HITS_PER_SESSION = 3


class SessionSearchArgs(BaseModel):
    query: str | None = Field(
        default=None, max_length=1000,
        description="Words, names or a question; quotes for a phrase.",
    )
    limit: int = Field(default=5, ge=1, le=20, description="Most sessions.")
    session_id: str | None = None
    around_message_id: int | None = Field(
        default=None, description="Read around this #id from a result.",
    )
    window: int = Field(default=3, ge=1, le=20, description="Messages each side.")
    role: Literal["user", "assistant", "tool", "system"] | None = Field(
        default=None,
    )
    since: str | None = Field(default=None, description="ISO date or time.")
    until: str | None = Field(default=None, description="ISO date or time, exclusive.")
    summarize: bool = Field(
        default=False, description="Also summarise the matched sessions.",
    )


def _time(value: str | None, name: str) -> float | None:
    if value is None:
        return None
    try:
        return parse_time(value, field=name)
    except ValueError as exc:
        raise ToolRetry(f"{exc}; use e.g. 2024-05-01 or 2024-05-01T14:30") from None


class SessionSearch(Tool):
    name = "session_search"
    deferred = True
    brief = "search past conversations and archived memory"
    description = (
        "Search past conversations with this user and archived memory, when they refer to "
        "something from before. Hits come grouped by session with neighbours and dates."
    )
    untrusted_output = True  # old tool results and outside text come back: data, not orders
    Args = SessionSearchArgs

    def taints(self, output: str) -> bool:
        """Only when the hits hold outside content: past tool results, stored wrapped."""
        return "<untrusted" in output

    async def run(self, ctx: ToolContext, args: SessionSearchArgs) -> str:
        from core.lanes import in_store_lane

        found = await in_store_lane(ctx.user_id, self._find, ctx, args)
        if isinstance(found, str):
            return found
        rendered, groups, archived = found
        parts = []
        if groups:
            if args.summarize:
                parts.append(await self._summary(ctx, args.query or "", rendered))
            parts.append(f"{groups} session(s) matched (» marks the matching messages):\n\n"
                         + rendered)
        if archived:
            parts.append(archived)
        if not parts:
            return f"No past messages or archived memories match {args.query!r}."
        return "\n\n".join(parts)

    def _find(self, ctx: ToolContext, args: SessionSearchArgs) -> str | tuple[str, int, str | None]:
        """The search itself, in the ``store`` lane: a whole answer, or (the matching sessions
        rendered, how many, the archived memory that matched)."""
        store = ctx.store
        session_id = None
        if args.session_id:
            session_id = store.search.resolve_session(ctx.user_id, args.session_id)
            if session_id is None:
                raise ToolRetry(f"no session {args.session_id!r}; use an id from a result")
        if args.around_message_id is not None:
            return self._around(ctx, args.around_message_id, args.window)
        if not args.query or not args.query.strip():
            raise ToolRetry("give a query (or around_message_id to read around a result)")
        filters = Filters(
            session_id=session_id, role=args.role, since=_time(args.since, "since"),
            until=_time(args.until, "until"),
        )
        hits = search_messages(
            store, ctx.user_id, args.query, limit=args.limit * HITS_PER_SESSION * 2,
            filters=filters, timezone=ctx.settings.timezone,
        )
        per_session: dict[str, int] = {}
        kept = []
        for hit in hits:
            if per_session.get(hit.session_id, 0) < HITS_PER_SESSION:
                if hit.session_id not in per_session and len(per_session) >= args.limit:
                    continue
                per_session[hit.session_id] = per_session.get(hit.session_id, 0) + 1
                kept.append(hit)
        groups = group_hits(store, ctx.user_id, kept)
        rendered = render_groups(groups, current_session=ctx.session_id) if groups else ""
        return rendered, len(groups), self._archive(ctx, args.query, args.limit)

    def _around(self, ctx: ToolContext, message_id: int, window: int) -> str:
        found = ctx.store.search.messages(ctx.user_id, [message_id]).get(message_id)
        if found is None:
            raise ToolRetry(f"no message #{message_id} in this user's sessions")
        messages = ctx.store.search.around(
            ctx.user_id, found.session_id, message_id, before=window, after=window
        )
        lines = [f"Session {found.session_id}, messages around #{message_id}:"]
        lines += [render_message(m, hit=None, current=ctx.session_id) for m in messages]
        return "\n".join(lines)

    def _archive(self, ctx: ToolContext, query: str, limit: int) -> str | None:
        memory = getattr(ctx.store, "memory", None)
        search_archive = getattr(memory, "search_archive", None)
        if search_archive is None:
            return None
        try:
            entries = search_archive(ctx.user_id, query, limit)
        except Exception:
            log.exception("archived memory search failed")
            return None
        lines = [f"- {_describe(entry)}" for entry in entries or []]
        return "Archived memory entries:\n" + "\n".join(lines) if lines else None

    async def _summary(self, ctx: ToolContext, query: str, rendered: str) -> str:
        router = ctx.services.router
        request = [
            Message(role="system", content=(
                "Summarise what these excerpts of past conversations say that is relevant to "
                "the query. Cite session ids and dates; say plainly when they do not answer it."
            )),
            Message(role="user", content=f"Query: {query}\n\nExcerpts:\n{rendered[:24_000]}"),
        ]
        try:
            response = await router.side().complete(request)
        except Exception as exc:
            return f"(summary unavailable: {exc})"
        from core.lanes import in_store_lane

        await in_store_lane(ctx.user_id, ctx.store.usage.record, ctx.user_id, response.usage,
                            session_id=ctx.session_id, inbox_id=ctx.inbox_id)
        return f"Summary: {response.message.content.strip()}"


def _describe(entry: Any) -> str:
    if isinstance(entry, str):
        return entry
    get = entry.get if isinstance(entry, dict) else lambda k, d=None: getattr(entry, k, d)
    content = get("content", "") or ""
    target = get("target")
    archived = get("archived_at")
    when = ""
    if isinstance(archived, int | float):
        from core.search.grouping import when as fmt

        when = f", archived {fmt(archived)}"
    return f"[{target or 'memory'}{when}] {content}"
