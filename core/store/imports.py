"""Rows written by imports from other agents' homes (``iris import-hermes``): which of their ids
became which Iris row (``import_records``), and the history itself written with its own
timestamps and ids — sessions, messages (indexed by the search triggers), usage and skill usage
counters. Rules (what maps to what) live in ``core.migrate``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from core.store.db import Database

ROWS_PER_INSERT = 400  # a multi-row INSERT stays under SQLite's bound-parameter limit


@dataclass(frozen=True)
class ImportedRow:
    """One message as written: ``external_id`` is the source's own id, kept for re-runs."""

    role: str
    content: str
    created_at: float
    external_id: str
    tool_calls: str | None = None
    tool_call_id: str | None = None
    name: str | None = None
    compacted: bool = False


class Imports:
    def __init__(self, db: Database):
        self.db = db

    # -- records -------------------------------------------------------------------------

    def target(self, user_id: str, source: str, kind: str, key: str) -> str | None:
        return cast("str | None", self.db.scalar(
            "SELECT target FROM import_records WHERE user_id = ? AND source = ? AND kind = ?"
            " AND key = ?", (user_id, source, kind, key)))

    def records(self, user_id: str, source: str, kind: str) -> dict[str, tuple[str, Any]]:
        rows = self.db.query(
            "SELECT key, target, detail FROM import_records WHERE user_id = ? AND source = ?"
            " AND kind = ?", (user_id, source, kind))
        return {r["key"]: (r["target"], json.loads(r["detail"]) if r["detail"] else None)
                for r in rows}

    def remember(self, user_id: str, source: str, kind: str, key: str, target: str,
                 detail: Any = None) -> None:
        self.db.execute(
            "INSERT INTO import_records (user_id, source, kind, key, target, detail, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, source, kind, key) DO UPDATE"
            " SET target = excluded.target, detail = excluded.detail",
            (user_id, source, kind, key, target,
             None if detail is None else json.dumps(detail, sort_keys=True), self.db.clock.now()),
        )

    # -- history -------------------------------------------------------------------------

    def session_by_external(self, user_id: str, external_id: str) -> dict[str, Any] | None:
        return self.db.one(
            "SELECT id, chat_key, ended_at, last_active_at FROM sessions WHERE user_id = ?"
            " AND external_id = ?", (user_id, external_id))

    def add_session(
        self, user_id: str, *, session_id: str, external_id: str, chat_key: str, platform: str,
        title: str | None, model: str | None, started_at: float, last_active_at: float,
        ended_at: float | None, end_reason: str | None,
    ) -> None:
        self.db.execute(
            "INSERT INTO sessions (id, user_id, chat_key, platform, title, model, started_at,"
            " last_active_at, ended_at, end_reason, external_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, user_id, chat_key, platform, title, model, started_at, last_active_at,
             ended_at, end_reason, external_id),
        )

    def touch_session(self, user_id: str, session_id: str, *, last_active_at: float,
                      ended_at: float | None, end_reason: str | None,
                      title: str | None) -> None:
        """A session that went on after an earlier import: its end moves, a title fills in."""
        self.db.execute(
            "UPDATE sessions SET last_active_at = max(last_active_at, ?), ended_at = ?,"
            " end_reason = ?, title = coalesce(title, ?) WHERE user_id = ? AND id = ?",
            (last_active_at, ended_at, end_reason, title, user_id, session_id),
        )

    def close_open_sessions(self, user_id: str, chat_key: str, *, except_id: str,
                            reason: str) -> int:
        """End every open session of a chat but one (a chat has one open session)."""
        return self.db.execute(
            "UPDATE sessions SET ended_at = last_active_at, end_reason = ? WHERE user_id = ?"
            " AND chat_key = ? AND ended_at IS NULL AND id != ?",
            (reason, user_id, chat_key, except_id),
        )

    def message_ids(self, user_id: str, session_id: str) -> set[str]:
        rows = self.db.query(
            "SELECT external_id FROM messages WHERE user_id = ? AND session_id = ?"
            " AND external_id IS NOT NULL", (user_id, session_id))
        return {r["external_id"] for r in rows}

    def add_messages(self, user_id: str, session_id: str, rows: Sequence[ImportedRow]) -> int:
        """Append messages in order, many per statement (the FTS triggers index each)."""
        for start in range(0, len(rows), ROWS_PER_INSERT):
            chunk = rows[start:start + ROWS_PER_INSERT]
            marks = ", ".join("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" for _ in chunk)
            params: list[Any] = []
            for m in chunk:
                params += [user_id, session_id, m.role, m.content, m.tool_calls, m.tool_call_id,
                           m.name, m.external_id, int(m.compacted), m.created_at]
            self.db.execute(
                "INSERT INTO messages (user_id, session_id, role, content, tool_calls,"
                f" tool_call_id, name, external_id, compacted, created_at) VALUES {marks}",
                params,
            )
        return len(rows)

    def add_usage(self, user_id: str, session_id: str, *, model: str, calls: int,
                  prompt_tokens: int, completion_tokens: int, cache_read_tokens: int,
                  cache_write_tokens: int, cost_usd: float | None, at: float) -> None:
        self.db.execute(
            "INSERT INTO usage (user_id, session_id, inbox_id, model, calls, prompt_tokens,"
            " completion_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at)"
            " VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?)",
            (user_id, session_id, model, calls, prompt_tokens, completion_tokens,
             cache_read_tokens, cache_write_tokens, cost_usd, at),
        )

    def seed_skill_usage(self, user_id: str, name: str, *, used: int, shown: int, patched: int,
                         last_used_at: float | None, last_shown_at: float | None,
                         last_patched_at: float | None) -> None:
        """Carry counters over: each is raised to the imported value, never added twice."""
        self.db.execute(
            "INSERT INTO skill_usage (user_id, name, shown, used, patched, last_shown_at,"
            " last_used_at, last_patched_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (user_id, name) DO UPDATE SET shown = max(shown, excluded.shown),"
            " used = max(used, excluded.used), patched = max(patched, excluded.patched),"
            " last_shown_at = coalesce(max(last_shown_at, excluded.last_shown_at),"
            " last_shown_at, excluded.last_shown_at),"
            " last_used_at = coalesce(max(last_used_at, excluded.last_used_at), last_used_at,"
            " excluded.last_used_at),"
            " last_patched_at = coalesce(max(last_patched_at, excluded.last_patched_at),"
            " last_patched_at, excluded.last_patched_at)",
            (user_id, name, shown, used, patched, last_shown_at, last_used_at, last_patched_at),
        )
