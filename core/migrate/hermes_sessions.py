"""Hermes sessions and messages into Iris sessions, with their own timestamps, titles, tool calls
and results, compression lineage, usage and cost.

Each Hermes session becomes one Iris session (its id derived from Hermes' id) in the chat it
happened in (``telegram:<chat>``, ``slack:<channel>``; ``hermes:<source>`` for the CLI and
platforms Iris lacks), written in one transaction with its messages, so an interrupted run leaves
whole sessions and the next run goes on where it stopped. A session seen before gets only the
messages it gained since. Hermes' compression chain (``parent_session_id``: a session ended by
compression continues in a child) is kept as lineage in the import records; messages Hermes
compacted stay searchable but out of the live context, as Iris' own compaction does. The newest
still-open Telegram/Slack session of a chat stays open, so the person's next message there
continues it (within Iris' idle gap)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from core.migrate.hermes_people import People, place_of
from core.store.imports import ImportedRow

if TYPE_CHECKING:
    from core.migrate.context import ImportContext
    from core.migrate.hermes_people import Place
    from core.migrate.hermes_state import HermesMessage, HermesSession, StateDB

ROLES = {"user", "assistant", "tool", "system"}
LIVE_PLATFORMS = {"telegram", "slack"}


def tool_calls_json(raw: str | None, message_id: int) -> tuple[str | None, str | None]:
    """Hermes' OpenAI-style tool calls as Iris stores them, or (None, why they were dropped)."""
    if not raw:
        return None, None
    try:
        calls = json.loads(raw)
    except ValueError:
        return None, "tool calls were not JSON"
    if not isinstance(calls, list):
        return None, "tool calls were not a list"
    out = []
    for i, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(name := fn.get("name"), str) or not name:
            return None, "a tool call had no function name"
        arguments = fn.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        call_id = call.get("id") or f"call_h{message_id}_{i}"
        out.append({"id": str(call_id), "type": "function",
                    "function": {"name": name, "arguments": arguments}})
    return (json.dumps(out) if out else None), None


def convert(message: HermesMessage, source: str, counts: dict[str, int]) -> ImportedRow | None:
    if message.role not in ROLES:
        counts[f"messages with role {message.role!r} (no Iris equivalent)"] += 1
        return None
    if not message.active and not message.compacted:
        counts["messages rewound or deleted in Hermes"] += 1
        return None
    calls, dropped = tool_calls_json(message.tool_calls, message.id)
    if dropped:
        counts[f"tool calls dropped ({dropped})"] += 1
    return ImportedRow(
        role=message.role, content=message.content or "", created_at=message.timestamp,
        external_id=f"{source}:m{message.id}", tool_calls=calls,
        tool_call_id=message.tool_call_id if message.role == "tool" else None,
        name=message.tool_name if message.role == "tool" else None,
        compacted=message.compacted and not message.active,
    )


class SessionImporter:
    def __init__(self, ctx: ImportContext, db: StateDB):
        self.ctx, self.db = ctx, db
        self.sessions = db.sessions()
        self.places = [(s, place_of(s, ctx.slack_team)) for s in self.sessions]
        self.people = People(ctx, self.places)
        self.iris_ids: dict[str, str] = {}
        self.dropped: dict[str, int] = {}

    def run(self) -> set[str]:
        """Import every session; returns the Iris users that received messages."""
        ctx, report = self.ctx, self.ctx.report
        total, done = self.db.count_messages(), 0
        touched: set[str] = set()
        notes: set[str] = set()
        from collections import Counter

        counts: Counter[str] = Counter()
        newest_open = self._newest_open()
        ctx.tick("messages", 0, total)
        for session, place in self.places:
            if place.note:
                notes.add(f"{session.source}: {place.note}")
            owner = self.people.scope(place, session.display_name)
            rows = [r for m in self.db.messages(session.id)
                    if (r := convert(m, ctx.source, counts)) is not None]
            added = self._one(session, place, owner, rows, session.id in newest_open)
            if added:
                touched.add(owner)
            done += len(rows)
            ctx.tick("messages", min(done, total), total)
        self.people.approved_users()
        for what, n in sorted(counts.items()):
            report.skipped("sessions", f"{n:,} {what}")
        for note in sorted(notes):
            report.skipped("people", note)
        return touched

    def _newest_open(self) -> set[str]:
        """Per chat, the newest session Hermes left open (only Telegram/Slack can go on)."""
        best: dict[str, HermesSession] = {}
        for session, place in self.places:
            if session.ended_at is None and place.platform in LIVE_PLATFORMS:
                best[place.chat_key] = session
        return {s.id for s in best.values()}

    def _one(self, session: HermesSession, place: Place, owner: str, rows: list[ImportedRow],
             keep_open: bool) -> int:
        ctx, report = self.ctx, self.ctx.report
        imports = ctx.store.imports
        external = f"{ctx.source}:{session.id}"
        existing = None if owner.startswith("(new") else imports.session_by_external(
            owner, external)
        last = max([session.started_at, *(r.created_at for r in rows)])
        ended = None if keep_open else (session.ended_at or last)
        reason = None if keep_open else (
            f"hermes:{session.end_reason}" if session.end_reason else "imported")
        if existing is not None:
            known = imports.message_ids(owner, existing["id"])
            new = [r for r in rows if r.external_id not in known]
            self.iris_ids[session.id] = existing["id"]
            if not new:
                report.count("sessions", "sessions already imported")
                return 0
            if not ctx.dry_run:
                with ctx.store.transaction():
                    imports.add_messages(owner, existing["id"], new)
                    imports.touch_session(owner, existing["id"], last_active_at=last,
                                          ended_at=ended if existing["ended_at"] else None,
                                          end_reason=reason if existing["ended_at"] else None,
                                          title=session.title)
            report.count("sessions", "sessions grown since the last import")
            report.count("sessions", "messages", len(new))
            return len(new)
        session_id = ctx.stable_id("ses", session.id)
        self.iris_ids[session.id] = session_id
        report.count("sessions", "sessions")
        report.count("sessions", "messages", len(rows))
        if session.parent_session_id:
            report.count("sessions", "sessions continuing a compressed one")
        if ctx.dry_run:
            return len(rows)
        parent = self.iris_ids.get(session.parent_session_id or "")
        with ctx.store.transaction():
            if keep_open:
                latest = ctx.store.sessions.latest(owner, place.chat_key)
                if latest is not None and latest.last_active_at > last:
                    ended, reason = last, "imported"
            imports.add_session(
                owner, session_id=session_id, external_id=external, chat_key=place.chat_key,
                platform=place.platform, title=session.title, model=session.model,
                started_at=session.started_at, last_active_at=last, ended_at=ended,
                end_reason=reason,
            )
            if ended is None:
                imports.close_open_sessions(owner, place.chat_key, except_id=session_id,
                                            reason="imported")
            imports.add_messages(owner, session_id, rows)
            self._usage(owner, session_id, session, last)
            imports.remember(owner, ctx.source, "session", session.id, session_id, {
                "parent": parent, "hermes_parent": session.parent_session_id,
                "source": session.source, "end_reason": session.end_reason,
            })
        return len(rows)

    def _usage(self, owner: str, session_id: str, session: HermesSession, at: float) -> None:
        tokens = session.input_tokens + session.output_tokens
        if not tokens and not session.cost_usd:
            return
        self.ctx.store.imports.add_usage(
            owner, session_id, model=session.model or "unknown", calls=session.api_calls,
            prompt_tokens=session.input_tokens,
            completion_tokens=session.output_tokens + session.reasoning_tokens,
            cache_read_tokens=session.cache_read_tokens,
            cache_write_tokens=session.cache_write_tokens, cost_usd=session.cost_usd, at=at,
        )
        self.ctx.report.count("sessions", "usage records")


def lineage(ctx: ImportContext, owner: str) -> dict[str, Any]:
    """Hermes session id -> (Iris session id, the Iris session it was compressed out of)."""
    return {key: (target, (detail or {}).get("parent"))
            for key, (target, detail) in ctx.store.imports.records(
                owner, ctx.source, "session").items()}
