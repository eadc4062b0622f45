"""The inbox: every inbound message once, keyed by (platform, platform message id)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, cast

from core.errors import NotFound
from core.messages import Attachment, CronRun, InboundMessage, Press
from core.store.db import Database, Row, Statement

FLAGS_ONCE_IN_META = ("clarify", "choice", "stream", "tapped")


def encode_inbound(message: InboundMessage) -> str:
    return json.dumps(dataclasses.asdict(message), separators=(",", ":"))


def decode_inbound(raw: str) -> InboundMessage:
    data: dict[str, Any] = json.loads(raw)
    data["attachments"] = tuple(Attachment(**a) for a in data.get("attachments", ()))
    meta = data.get("meta") or {}
    if data.get("cron") is None and isinstance(meta.get("cron"), dict):  # an older payload
        data["meta"] = {k: v for k, v in meta.items() if k not in ("cron", "model")}
        data["cron"] = {**meta["cron"], "model": meta.get("model")}
    if data.get("cron") is not None:
        data["cron"] = CronRun(**data["cron"])
    meta = data.get("meta") or {}
    if any(flag in meta for flag in FLAGS_ONCE_IN_META):  # stored before they had fields
        data["meta"] = {k: v for k, v in meta.items() if k not in FLAGS_ONCE_IN_META}
        if meta.get("clarify") is not None and data.get("press") is None:
            data["press"] = {"question_id": str(meta["clarify"]),
                             "choice": int(meta.get("choice", 0))}
        data["stream"] = bool(data.get("stream") or meta.get("stream"))
        data["tapped"] = data.get("tapped") or meta.get("tapped")
    if data.get("press") is not None:
        data["press"] = Press(**data["press"])
    return InboundMessage(**data)


@dataclass(frozen=True)
class InboxEntry:
    id: int
    user_id: str
    chat_key: str
    message: InboundMessage
    status: str  # pending | done | failed | cancelled
    attempts: int
    session_id: str | None
    reply: str | None
    error: str | None
    received_at: float
    done_at: float | None

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed", "cancelled")

    @classmethod
    def from_row(cls, row: Row) -> InboxEntry:
        return cls(
            id=row["id"],
            user_id=row["user_id"],
            chat_key=row["chat_key"],
            message=decode_inbound(row["payload"]),
            status=row["status"],
            attempts=row["attempts"],
            session_id=row["session_id"],
            reply=row["reply"],
            error=row["error"],
            received_at=row["received_at"],
            done_at=row["done_at"],
        )


class Inbox:
    def __init__(self, db: Database):
        self.db = db

    def add(self, user_id: str, message: InboundMessage) -> int | None:
        """Record a message; returns its id, or None when this delivery was already recorded."""
        changed, [rows] = self.db.write_then_read([(
            "INSERT INTO inbox (user_id, chat_key, platform, platform_message_id, account,"
            " payload, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (platform, platform_message_id) DO NOTHING",
            (
                user_id, message.chat_key, message.platform, message.platform_message_id,
                message.account, encode_inbound(message), self.db.clock.now(),
            ),
        )], [(
            "SELECT id FROM inbox WHERE user_id = ? AND platform = ? AND platform_message_id = ?",
            (user_id, message.platform, message.platform_message_id),
        )])
        return rows[0]["id"] if changed == 1 and rows else None

    def last_received(self, user_id: str, chat_key: str) -> float | None:
        """When the latest message of the chat arrived (platforms with a reply window)."""
        value = self.db.scalar(
            "SELECT max(received_at) FROM inbox WHERE user_id = ? AND chat_key = ?",
            (user_id, chat_key),
        )
        return float(value) if value is not None else None

    def last_id(self, user_id: str, chat_key: str) -> int:
        """The newest message of the chat (0 for none): a clock-free way to ask whether the
        person wrote since a moment."""
        value = self.db.scalar(
            "SELECT max(id) FROM inbox WHERE user_id = ? AND chat_key = ?", (user_id, chat_key)
        )
        return int(value) if value is not None else 0

    def get(self, user_id: str, entry_id: int) -> InboxEntry:
        row = self.db.one("SELECT * FROM inbox WHERE user_id = ? AND id = ?", (user_id, entry_id))
        if not row:  # the user was merged into another (account link) while a waiter held its id
            row = self.db.one(
                "SELECT i.* FROM inbox i JOIN users u ON i.user_id = u.merged_into"
                " WHERE u.id = ? AND i.id = ?",
                (user_id, entry_id),
            )
        if not row:
            raise NotFound(f"no inbox entry {entry_id}")
        return InboxEntry.from_row(row)

    def find(self, user_id: str, platform: str, platform_message_id: str) -> InboxEntry | None:
        row = self.db.one(
            "SELECT * FROM inbox WHERE user_id = ? AND platform = ? AND platform_message_id = ?",
            (user_id, platform, platform_message_id),
        )
        return InboxEntry.from_row(row) if row else None

    def next_pending(self, user_id: str, chat_key: str) -> InboxEntry | None:
        row = self.db.one(
            "SELECT * FROM inbox WHERE user_id = ? AND chat_key = ? AND status = 'pending'"
            " ORDER BY id LIMIT 1",
            (user_id, chat_key),
        )
        return InboxEntry.from_row(row) if row else None

    def has_pending(self, user_id: str, chat_key: str) -> bool:
        return bool(
            self.db.scalar(
                "SELECT count(*) FROM inbox WHERE user_id = ? AND chat_key = ?"
                " AND status = 'pending'",
                (user_id, chat_key),
            )
        )

    def mark_started(self, user_id: str, entry_id: int) -> int:
        """Count an attempt; returns the attempt number."""
        return cast("int", self.db.scalar(
            "UPDATE inbox SET attempts = attempts + 1, started_at = ? WHERE user_id = ? AND id = ?"
            " RETURNING attempts",
            (self.db.clock.now(), user_id, entry_id),
        ))

    def note_session(self, user_id: str, entry_id: int, session_id: str) -> None:
        """Record the session a running entry's turn uses (a streaming caller's header)."""
        self.db.execute(
            "UPDATE inbox SET session_id = ? WHERE user_id = ? AND id = ? AND status = 'pending'",
            (session_id, user_id, entry_id),
        )

    def finish(
        self, user_id: str, entry_id: int, *, status: str, session_id: str | None,
        reply: str | None, error: str | None = None,
    ) -> bool:
        """Mark an entry done/failed (inside the turn's transaction). False if already finished."""
        changed = self.db.execute(*self.finish_statement(
            user_id, entry_id, status=status, session_id=session_id, reply=reply, error=error))
        return changed == 1

    def finish_statement(
        self, user_id: str, entry_id: int, *, status: str, session_id: str | None,
        reply: str | None, error: str | None = None,
    ) -> Statement:
        """``finish`` as a statement for a batch: it changes one row, or none when the entry
        was already finished."""
        return (
            "UPDATE inbox SET status = ?, session_id = ?, reply = ?, error = ?, done_at = ?"
            " WHERE user_id = ? AND id = ? AND status = 'pending'",
            (status, session_id, reply, error, self.db.clock.now(), user_id, entry_id),
        )

    def latest_messages(
        self, user_id: str, *, limit: int, chat_key: str | None = None,
        platforms: tuple[str, ...] | None = None,
    ) -> list[InboundMessage]:
        """The user's latest inbound messages, newest first, from one chat or on some
        platforms (where replies to them could be sent)."""
        sql, params = "SELECT payload FROM inbox WHERE user_id = ?", [user_id]
        if chat_key is not None:
            sql += " AND chat_key = ?"
            params.append(chat_key)
        if platforms is not None:
            sql += f" AND platform IN ({','.join('?' for _ in platforms)})"
            params += platforms
        rows = self.db.query(sql + " ORDER BY id DESC LIMIT ?", (*params, limit))
        return [decode_inbound(row["payload"]) for row in rows]

    def pending_chats(self, user_id: str) -> list[str]:
        """The user's chats with entries still waiting to run."""
        rows = self.db.query(
            "SELECT DISTINCT chat_key FROM inbox WHERE user_id = ? AND status = 'pending'",
            (user_id,),
        )
        return [row["chat_key"] for row in rows]

    def platform_last_received(self, platform: str) -> float | None:
        """System summary (the owner's platforms page): when the platform last delivered a
        message, across all users. A time only, never content."""
        value = self.db.scalar("SELECT MAX(received_at) FROM inbox WHERE platform = ?",
                               (platform,))
        return float(value) if value is not None else None

    def stalled_chats(self, *, older_than: float) -> list[tuple[str, str]]:
        """System sweep: (user_id, chat_key) of chats with entries pending since before
        ``older_than``. Returns keys only, never message content."""
        rows = self.db.query(
            "SELECT DISTINCT user_id, chat_key FROM inbox WHERE status = 'pending'"
            " AND received_at < ?",
            (older_than,),
        )
        return [(row["user_id"], row["chat_key"]) for row in rows]
