"""Index queries over a user's messages: BM25 from the porter and trigram FTS tables, plain
substring scans for short CJK terms, and reads of messages around a hit. Every query is confined
to one user twice: by the FTS ``scope`` column and by a join on ``messages.user_id``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, cast

from core.store.db import Database
from core.store.sessions import StoredMessage


class SessionMeta(TypedDict):
    id: str
    title: str | None
    external_id: str | None
    started_at: float
    last_active_at: float
    chat_key: str
    message_count: int


@dataclass(frozen=True)
class Filters:
    session_id: str | None = None
    role: str | None = None
    since: float | None = None
    until: float | None = None

    def sql(self) -> tuple[str, list[object]]:
        clauses: list[str] = []
        params: list[object] = []
        if self.session_id is not None:
            clauses.append("m.session_id = ?")
            params.append(self.session_id)
        if self.role is not None:
            clauses.append("m.role = ?")
            params.append(self.role)
        if self.since is not None:
            clauses.append("m.created_at >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("m.created_at < ?")
            params.append(self.until)
        return "".join(f" AND {c}" for c in clauses), params


class SearchIndex:
    def __init__(self, db: Database):
        self.db = db

    def match_ids(
        self, user_id: str, table: str, scope: str | None, expression: str, filters: Filters,
        limit: int,
    ) -> list[int]:
        """Ids of (up to ``limit``) messages matching ``expression``, unranked."""
        match = f"{scope} AND ({expression})" if scope else expression
        extra, params = filters.sql()
        rows = self.db.query(
            f"SELECT f.rowid AS id FROM {table} f CROSS JOIN messages m ON m.id = f.rowid"
            f" WHERE {table} MATCH ? AND m.user_id = ?{extra} LIMIT ?",
            (match, user_id, *params, limit),
        )
        return [row["id"] for row in rows]

    def count_matches(self, table: str, scope: str | None, expression: str) -> int:
        """How many of the scope's rows match ``expression`` (a document frequency)."""
        match = f"{scope} AND ({expression})" if scope else expression
        return cast("int", self.db.scalar(
            f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (match,)))

    def stats(self, user_id: str, *, sample: int = 2000) -> tuple[int, float]:
        """(number of the user's messages, average length of the recent ones in characters)."""
        count = self.db.scalar("SELECT count(*) FROM messages WHERE user_id = ?", (user_id,))
        average = self.db.scalar(
            "SELECT avg(length(content)) FROM (SELECT content FROM messages WHERE user_id = ?"
            " ORDER BY id DESC LIMIT ?)",
            (user_id, sample),
        )
        return count or 0, float(average or 1.0)

    def contains(
        self, user_id: str, needles: list[str], filters: Filters, limit: int
    ) -> list[tuple[int, int]]:
        """(message id, number of needles found) for messages containing any needle: a scan of
        the user's rows, used only for CJK terms shorter than a trigram."""
        if not needles:
            return []
        extra, params = filters.sql()
        hits = " + ".join("(instr(m.content, ?) > 0)" for _ in needles)
        rows = self.db.query(
            f"SELECT m.id AS id, ({hits}) AS n FROM messages m WHERE m.user_id = ?{extra}"
            f" AND ({hits}) > 0 ORDER BY n DESC, m.id DESC LIMIT ?",
            (*needles, user_id, *params, *needles, limit),
        )
        return [(row["id"], row["n"]) for row in rows]

    def messages(self, user_id: str, ids: list[int]) -> dict[int, StoredMessage]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.query(
            f"SELECT * FROM messages WHERE user_id = ? AND id IN ({marks})", (user_id, *ids)
        )
        return {row["id"]: StoredMessage.from_row(row) for row in rows}

    def speakers(self, user_id: str, *, limit: int = 50) -> list[str]:
        """The names speakers go by in the user's conversations (user and assistant turns)."""
        rows = self.db.query(
            "SELECT DISTINCT name FROM messages WHERE user_id = ? AND name IS NOT NULL"
            " AND role IN ('user', 'assistant') LIMIT ?",
            (user_id, limit),
        )
        return [row["name"] for row in rows if row["name"]]

    def around(
        self, user_id: str, session_id: str, message_id: int, *, before: int, after: int
    ) -> list[StoredMessage]:
        """Up to ``before`` messages before and ``after`` after ``message_id`` in its session,
        with the message itself, oldest first."""
        head = self.db.query(
            "SELECT * FROM messages WHERE user_id = ? AND session_id = ? AND id < ?"
            " ORDER BY id DESC LIMIT ?",
            (user_id, session_id, message_id, before),
        )
        tail = self.db.query(
            "SELECT * FROM messages WHERE user_id = ? AND session_id = ? AND id >= ?"
            " ORDER BY id LIMIT ?",
            (user_id, session_id, message_id, after + 1),
        )
        return [StoredMessage.from_row(r) for r in [*reversed(head), *tail]]

    def session_meta(self, user_id: str, session_ids: list[str]) -> dict[str, SessionMeta]:
        """Title, external id, dates and message count of each session."""
        if not session_ids:
            return {}
        marks = ",".join("?" * len(session_ids))
        rows = self.db.query(
            "SELECT s.id, s.title, s.external_id, s.started_at, s.last_active_at, s.chat_key,"
            " (SELECT count(*) FROM messages m WHERE m.user_id = s.user_id"
            "  AND m.session_id = s.id) AS message_count"
            f" FROM sessions s WHERE s.user_id = ? AND s.id IN ({marks})",
            (user_id, *session_ids),
        )
        return {row["id"]: cast(SessionMeta, row) for row in rows}  # the SELECT's columns

    def newest(self, user_id: str) -> float | None:
        return cast("float | None", self.db.scalar(
            "SELECT max(last_active_at) FROM sessions WHERE user_id = ?", (user_id,)
        ))

    def resolve_session(self, user_id: str, ref: str) -> str | None:
        """A session id from its id or the external id it was imported with."""
        row = self.db.one(
            "SELECT id FROM sessions WHERE user_id = ? AND (id = ? OR external_id = ?)"
            " ORDER BY id = ? DESC LIMIT 1",
            (user_id, ref, ref, ref),
        )
        return row["id"] if row else None
