"""Whole sessions in and out: bulk import of past conversations, listing for export, titles."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from core.errors import IrisUsageError
from core.ids import new_id
from core.store.db import Database
from core.store.sessions import Session

SESSION_ID_RE = re.compile(r"^[A-Za-z0-9_.:@+-]{1,128}$")


@dataclass(frozen=True)
class ImportedMessage:
    role: str
    content: str
    created_at: float
    external_id: str | None = None
    tool_calls: str | None = None
    tool_call_id: str | None = None
    name: str | None = None
    images: str | None = None  # JSON list of image refs, as messages.images holds them


@dataclass(frozen=True)
class SessionSummaryRow:
    session: Session
    external_id: str | None
    message_count: int


class Transcripts:
    def __init__(self, db: Database):
        self.db = db

    def find_external(self, user_id: str, external_id: str) -> str | None:
        return cast("str | None", self.db.scalar(
            "SELECT id FROM sessions WHERE user_id = ? AND external_id = ?", (user_id, external_id)
        ))

    def import_session(
        self, user_id: str, *, external_id: str, started_at: float, title: str | None,
        messages: Sequence[ImportedMessage],
    ) -> tuple[str, bool]:
        """Store a past session with its messages (indexed by the search triggers). Returns
        (session id, created). Importing the same session again is a no-op; a different session
        under an id already used by this user is refused, never merged or overwritten."""
        with self.db.transaction():
            existing = self.find_external(user_id, external_id)
            if existing is not None:
                self._check_same(user_id, existing, external_id, messages)
                return existing, False
            taken = SESSION_ID_RE.match(external_id) is None or self.db.scalar(
                "SELECT 1 FROM sessions WHERE id = ?", (external_id,)
            )
            session_id = new_id("ses") if taken else external_id
            last = max([started_at, *(m.created_at for m in messages)])
            self.db.execute(
                "INSERT INTO sessions (id, user_id, chat_key, platform, title, started_at,"
                " last_active_at, ended_at, end_reason, external_id)"
                " VALUES (?, ?, 'import', 'import', ?, ?, ?, ?, 'imported', ?)",
                (session_id, user_id, title, started_at, last, last, external_id),
            )
            self.db._conn.executemany(
                "INSERT INTO messages (user_id, session_id, role, content, tool_calls,"
                " tool_call_id, name, external_id, images, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (user_id, session_id, m.role, m.content, m.tool_calls, m.tool_call_id,
                     m.name, m.external_id, m.images, m.created_at)
                    for m in messages
                ],
            )
        return session_id, True

    def _check_same(
        self, user_id: str, session_id: str, external_id: str,
        messages: Sequence[ImportedMessage],
    ) -> None:
        rows = self.db.query(
            "SELECT role, content, external_id FROM messages WHERE user_id = ? AND session_id = ?"
            " ORDER BY id",
            (user_id, session_id),
        )
        stored = [(r["role"], r["content"], r["external_id"]) for r in rows]
        incoming = [(m.role, m.content, m.external_id) for m in messages]
        if stored != incoming:
            raise IrisUsageError(
                f"session {external_id!r} was already imported for this user with different "
                "messages; refusing to merge or overwrite it (import it under a new session_id)"
            )

    def rows_without_images(self, user_id: str, session_id: str) -> list[int | None]:
        """Per message of the session, in order: its row id when it has no images, else None."""
        rows = self.db.query(
            "SELECT id, images FROM messages WHERE user_id = ? AND session_id = ? ORDER BY id",
            (user_id, session_id),
        )
        return [None if r["images"] else int(r["id"]) for r in rows]

    def set_images(self, user_id: str, message_id: int, images: str) -> bool:
        """Link images to a message that has none (never replaces a message's images)."""
        return self.db.execute(
            "UPDATE messages SET images = ? WHERE user_id = ? AND id = ?"
            " AND (images IS NULL OR images = '')",
            (images, user_id, message_id),
        ) > 0

    def set_title(self, user_id: str, session_id: str, title: str, *, only_if_empty: bool) -> bool:
        sql = "UPDATE sessions SET title = ? WHERE user_id = ? AND id = ?"
        if only_if_empty:
            sql += " AND (title IS NULL OR title = '')"
        return self.db.execute(sql, (title, user_id, session_id)) > 0

    def sessions(
        self, user_id: str, *, since: float | None = None, limit: int | None = None,
        newest_first: bool = True,
    ) -> list[SessionSummaryRow]:
        sql = (
            "SELECT s.*, (SELECT count(*) FROM messages m WHERE m.user_id = s.user_id"
            " AND m.session_id = s.id) AS message_count FROM sessions s WHERE s.user_id = ?"
        )
        params: list[object] = [user_id]
        if since is not None:
            sql += " AND s.last_active_at >= ?"
            params.append(since)
        sql += f" ORDER BY s.last_active_at {'DESC' if newest_first else 'ASC'}, s.id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = self.db.query(sql, params)
        return [
            SessionSummaryRow(
                Session.from_row(row), row.get("external_id"), row["message_count"]
            )
            for row in rows
        ]
