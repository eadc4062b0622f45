"""Sessions (a run of turns in one chat) and their messages. Messages are never deleted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from core.errors import NotFound
from core.ids import new_id
from core.messages import Message
from core.store.db import Database, Row, Statement


def latest_session(user_id: str, chat_key: str) -> Statement:
    return ("SELECT * FROM sessions WHERE user_id = ? AND chat_key = ? AND ended_at IS NULL"
            " ORDER BY last_active_at DESC LIMIT 1", (user_id, chat_key))


def message_tail(user_id: str, session_id: str, limit: int) -> Statement:
    return ("SELECT * FROM messages WHERE user_id = ? AND session_id = ? AND compacted = 0"
            " ORDER BY id DESC LIMIT ?", (user_id, session_id, limit))


@dataclass(frozen=True)
class Session:
    id: str
    user_id: str
    chat_key: str
    platform: str
    title: str | None
    model: str | None
    system_prompt: str | None
    started_at: float
    last_active_at: float
    ended_at: float | None
    end_reason: str | None

    @classmethod
    def from_row(cls, row: Row) -> Session:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class StoredMessage:
    id: int
    session_id: str
    message: Message
    author: str | None
    created_at: float
    compacted: bool
    external_id: str | None
    inbox_id: int | None = None  # the inbox entry whose turn wrote it

    @classmethod
    def from_row(cls, row: Row) -> StoredMessage:
        message = Message(
            role=row["role"],
            content=row["content"],
            tool_calls=Message.calls_from_json(row["tool_calls"]),
            tool_call_id=row["tool_call_id"],
            name=row["name"],
            images=Message.images_from_json(row.get("images")),
        )
        return cls(
            id=row["id"],
            session_id=row["session_id"],
            message=message,
            author=row["author"],
            created_at=row["created_at"],
            compacted=bool(row["compacted"]),
            external_id=row["external_id"],
            inbox_id=row.get("inbox_id"),
        )


class Sessions:
    def __init__(self, db: Database):
        self.db = db

    def get(self, user_id: str, session_id: str) -> Session:
        row = self.db.one(*self._get_statement(user_id, session_id))
        if not row:
            raise NotFound(f"no session {session_id!r} for this user")
        return Session.from_row(row)

    @staticmethod
    def _get_statement(user_id: str, session_id: str) -> Statement:
        return "SELECT * FROM sessions WHERE user_id = ? AND id = ?", (user_id, session_id)

    def latest(self, user_id: str, chat_key: str) -> Session | None:
        row = self.db.one(*latest_session(user_id, chat_key))
        return Session.from_row(row) if row else None

    def current(
        self, user_id: str, chat_key: str, platform: str, *, idle_seconds: float, at: float
    ) -> Session:
        """The chat's open session, or a new one when there is none or it has been idle."""
        session = self.latest(user_id, chat_key)
        if session and at - session.last_active_at <= idle_seconds:
            return session
        return self.start(user_id, chat_key, platform, at=at, reason="idle" if session else None)

    def start(
        self, user_id: str, chat_key: str, platform: str, *, at: float | None = None,
        reason: str | None = "new",
    ) -> Session:
        """End the chat's open session (if any) and start a new one."""
        at = self.db.clock.now() if at is None else at
        session_id = new_id("ses")
        _, [rows] = self.db.write_then_read([
            ("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE user_id = ?"
             " AND chat_key = ? AND ended_at IS NULL", (at, reason, user_id, chat_key)),
            ("INSERT INTO sessions (id, user_id, chat_key, platform, started_at, last_active_at)"
             " VALUES (?, ?, ?, ?, ?, ?)", (session_id, user_id, chat_key, platform, at, at)),
        ], [self._get_statement(user_id, session_id)])
        return Session.from_row(rows[0])

    def freeze_prompt(self, user_id: str, session_id: str, system_prompt: str) -> str:
        """Keep the first system prompt built for a session; returns the one that stands."""
        _, [rows] = self.db.write_then_read([(
            "UPDATE sessions SET system_prompt = ? WHERE user_id = ? AND id = ?"
            " AND system_prompt IS NULL", (system_prompt, user_id, session_id),
        )], [("SELECT system_prompt FROM sessions WHERE user_id = ? AND id = ?",
              (user_id, session_id))])
        return (rows[0]["system_prompt"] if rows else None) or system_prompt

    def touch(self, user_id: str, session_id: str, *, at: float) -> None:
        """Record activity in a session (inside the turn's transaction)."""
        self.db.execute(*self.touch_statement(user_id, session_id, at=at))

    def touch_statement(self, user_id: str, session_id: str, *, at: float) -> Statement:
        return ("UPDATE sessions SET last_active_at = ? WHERE user_id = ? AND id = ?",
                (at, user_id, session_id))

    def end(self, user_id: str, session_id: str, *, at: float, reason: str) -> None:
        """Close a session after its last activity at ``at`` (a subagent's own session)."""
        self.db.execute(
            "UPDATE sessions SET last_active_at = ?, ended_at = ?, end_reason = ?"
            " WHERE user_id = ? AND id = ?",
            (at, at, reason, user_id, session_id),
        )

    def last_ended(self, user_id: str, chat_key: str, *, other_than: str) -> str | None:
        """The id of the chat's most recently ended session other than ``other_than``."""
        return cast("str | None", self.db.scalar(
            "SELECT id FROM sessions WHERE user_id = ? AND chat_key = ? AND ended_at IS NOT NULL"
            " AND id != ? ORDER BY ended_at DESC LIMIT 1",
            (user_id, chat_key, other_than),
        ))

    def count(self, user_id: str) -> int:
        return int(self.db.scalar("SELECT count(*) FROM sessions WHERE user_id = ?", (user_id,)))

    def list(self, user_id: str, *, limit: int = 50) -> list[Session]:
        rows = self.db.query(
            "SELECT * FROM sessions WHERE user_id = ? ORDER BY last_active_at DESC LIMIT ?",
            (user_id, limit),
        )
        return [Session.from_row(row) for row in rows]


class Messages:
    def __init__(self, db: Database):
        self.db = db

    def tail(self, user_id: str, session_id: str, *, limit: int) -> list[StoredMessage]:
        """The last ``limit`` uncompacted messages of a session, oldest first."""
        rows = self.db.query(*message_tail(user_id, session_id, limit))
        return [StoredMessage.from_row(row) for row in reversed(rows)]

    def for_session(self, user_id: str, session_id: str) -> list[StoredMessage]:
        rows = self.db.query(
            "SELECT * FROM messages WHERE user_id = ? AND session_id = ? ORDER BY id",
            (user_id, session_id),
        )
        return [StoredMessage.from_row(row) for row in rows]

    def count(self, user_id: str, session_id: str | None = None) -> int:
        if session_id is None:
            return cast("int", self.db.scalar(
                "SELECT count(*) FROM messages WHERE user_id = ?", (user_id,)))
        return cast("int", self.db.scalar(
            "SELECT count(*) FROM messages WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        ))

    def count_user_turns(self, user_id: str, session_id: str, *, after_id: int = 0) -> int:
        """The session's user messages with an id above ``after_id``."""
        return int(self.db.scalar(
            "SELECT count(*) FROM messages WHERE user_id = ? AND session_id = ? AND role = 'user'"
            " AND id > ?",
            (user_id, session_id, after_id),
        ))

    def insert(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[Message],
        *,
        at: float,
        author: str | None = None,
        inbox_id: int | None = None,
    ) -> list[int]:
        """Append messages to a session (call inside the turn's transaction)."""
        ids = []
        for statement in self.insert_statements(user_id, session_id, messages, at=at,
                                                author=author, inbox_id=inbox_id):
            row = self.db.one(*statement)
            assert row is not None
            ids.append(row["id"])
        return ids

    def insert_statements(
        self, user_id: str, session_id: str, messages: Sequence[Message], *, at: float,
        author: str | None = None, inbox_id: int | None = None,
    ) -> list[Statement]:
        """``insert`` as statements for a batch, each RETURNING its message's id."""
        return [(
            "INSERT INTO messages (user_id, session_id, role, content, tool_calls,"
            " tool_call_id, name, author, inbox_id, images, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                user_id, session_id, message.role, message.content,
                message.tool_calls_json(), message.tool_call_id, message.name,
                author if message.role == "user" else None, inbox_id, message.images_json(),
                at,
            ),
        ) for message in messages]
