"""Context compression records: summaries that stand in for compacted messages in the prompt, and
per-session failure state for backing off. Compaction never deletes: it flags messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from core.store.db import Database, Row, Statement


@dataclass(frozen=True)
class Summary:
    id: int
    session_id: str
    content: str
    first_message_id: int
    last_message_id: int
    compacted_count: int
    model: str | None
    created_at: float

    @classmethod
    def from_row(cls, row: Row) -> Summary:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class CompressionState:
    failures: int = 0
    retry_at: float | None = None
    last_error: str | None = None


def latest_summary(user_id: str, session_id: str) -> Statement:
    return ("SELECT * FROM session_summaries WHERE user_id = ? AND session_id = ?"
            " ORDER BY id DESC LIMIT 1", (user_id, session_id))


class Compaction:
    def __init__(self, db: Database):
        self.db = db

    def latest(self, user_id: str, session_id: str) -> Summary | None:
        row = self.db.one(*latest_summary(user_id, session_id))
        return Summary.from_row(row) if row else None

    def history(self, user_id: str, session_id: str) -> list[Summary]:
        rows = self.db.query(
            "SELECT * FROM session_summaries WHERE user_id = ? AND session_id = ? ORDER BY id",
            (user_id, session_id),
        )
        return [Summary.from_row(row) for row in rows]

    def compact(
        self, user_id: str, session_id: str, message_ids: list[int], content: str,
        *, model: str | None,
    ) -> Summary:
        """Flag ``message_ids`` compacted and record the summary that replaces them (and every
        earlier summary) in the prompt, in one transaction."""
        if not message_ids:
            raise ValueError("nothing to compact")
        first = min(message_ids)
        previous = self.latest(user_id, session_id)
        if previous is not None:
            first = min(first, previous.first_message_id)
        with self.db.transaction():
            marks = ",".join("?" * len(message_ids))
            self.db.execute(
                f"UPDATE messages SET compacted = 1 WHERE user_id = ? AND session_id = ?"
                f" AND id IN ({marks})",
                (user_id, session_id, *message_ids),
            )
            count = self.db.scalar(
                "SELECT count(*) FROM messages WHERE user_id = ? AND session_id = ?"
                " AND compacted = 1",
                (user_id, session_id),
            )
            row = self.db.one(
                "INSERT INTO session_summaries (user_id, session_id, content, first_message_id,"
                " last_message_id, compacted_count, model, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
                (user_id, session_id, content, first, max(message_ids), count, model,
                 self.db.clock.now()),
            )
            self.db.execute(
                "DELETE FROM compression_state WHERE user_id = ? AND session_id = ?",
                (user_id, session_id),
            )
        assert row is not None
        return Summary.from_row(row)

    def live_count(self, user_id: str, session_id: str) -> int:
        """Messages of the session not yet compacted."""
        return cast("int", self.db.scalar(
            "SELECT count(*) FROM messages WHERE user_id = ? AND session_id = ? AND compacted = 0",
            (user_id, session_id),
        ))

    def state(self, user_id: str, session_id: str) -> CompressionState:
        row = self.db.one(
            "SELECT failures, retry_at, last_error FROM compression_state"
            " WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        )
        if not row:
            return CompressionState()
        return CompressionState(row["failures"], row["retry_at"], row["last_error"])

    def record_failure(
        self, user_id: str, session_id: str, error: str, *, retry_at: float
    ) -> CompressionState:
        self.db.execute(
            "INSERT INTO compression_state (user_id, session_id, failures, retry_at, last_error,"
            " updated_at) VALUES (?, ?, 1, ?, ?, ?)"
            " ON CONFLICT (user_id, session_id) DO UPDATE SET failures = failures + 1,"
            " retry_at = excluded.retry_at, last_error = excluded.last_error,"
            " updated_at = excluded.updated_at",
            (user_id, session_id, retry_at, error[:500], self.db.clock.now()),
        )
        return self.state(user_id, session_id)
