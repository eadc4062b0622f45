"""Outbound deliveries: a reply is recorded with its turn, then sent, retried, never doubled."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.errors import NotFound
from core.store.db import Database, Row, Statement


@dataclass(frozen=True)
class Delivery:
    id: int
    user_id: str
    source: str
    platform: str
    chat_key: str
    target: dict[str, Any]
    text: str
    status: str  # pending | sent | failed
    attempts: int
    next_attempt_at: float
    last_error: str | None
    platform_ids: list[str]
    created_at: float
    sent_at: float | None
    held_at: float | None = None  # waiting for the person to reopen a reply window
    reopen_id: str | None = None  # the template message sent to reopen it

    @classmethod
    def from_row(cls, row: Row) -> Delivery:
        return cls(
            id=row["id"],
            user_id=row["user_id"],
            source=row["source"],
            platform=row["platform"],
            chat_key=row["chat_key"],
            target=json.loads(row["target"]),
            text=row["text"],
            status=row["status"],
            attempts=row["attempts"],
            next_attempt_at=row["next_attempt_at"],
            last_error=row["last_error"],
            platform_ids=json.loads(row["platform_ids"] or "[]"),
            created_at=row["created_at"],
            sent_at=row["sent_at"],
            held_at=row["held_at"],
            reopen_id=row["reopen_id"],
        )


class Deliveries:
    def __init__(self, db: Database):
        self.db = db

    def add(
        self, user_id: str, *, source: str, platform: str, chat_key: str,
        target: dict[str, Any], text: str,
    ) -> int | None:
        """Record a reply to send (inside the turn's transaction); None if ``source`` exists."""
        row = self.db.one(*self.add_statement(user_id, source=source, platform=platform,
                                              chat_key=chat_key, target=target, text=text))
        return row["id"] if row else None

    def add_statement(
        self, user_id: str, *, source: str, platform: str, chat_key: str,
        target: dict[str, Any], text: str, claim: tuple[str, float] | None = None,
        returning: bool = True,
    ) -> Statement:
        """``add`` as a statement for a batch, RETURNING the new row (none if ``source``
        exists; ``returning=False``: nothing, read it with ``for_source_statement``). With
        ``claim`` (owner, seconds) the row starts claimed by that owner, its first attempt
        counted, as ``claim`` would leave it: the sender goes at once."""
        at = self.db.clock.now()
        owner, until, attempts = (claim[0], at + claim[1], 1) if claim else (None, None, 0)
        return (
            "INSERT INTO deliveries (user_id, source, platform, chat_key, target, text,"
            " next_attempt_at, created_at, claimed_by, claimed_until, attempts)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (source) DO NOTHING" + (" RETURNING *" if returning else ""),
            (user_id, source, platform, chat_key, json.dumps(target), text, at, at, owner,
             until, attempts),
        )

    def get(self, user_id: str, delivery_id: int) -> Delivery:
        row = self.db.one(
            "SELECT * FROM deliveries WHERE user_id = ? AND id = ?", (user_id, delivery_id)
        )
        if not row:
            raise NotFound(f"no delivery {delivery_id}")
        return Delivery.from_row(row)

    @staticmethod
    def for_source_statement(user_id: str, source: str) -> Statement:
        return "SELECT * FROM deliveries WHERE user_id = ? AND source = ?", (user_id, source)

    def for_source(self, user_id: str, source: str) -> Delivery | None:
        row = self.db.one(*self.for_source_statement(user_id, source))
        return Delivery.from_row(row) if row else None

    def claim(self, user_id: str, delivery_id: int, owner: str, ttl: float) -> Delivery | None:
        """Take the right to send a pending delivery (no one else holds it); None otherwise."""
        at = self.db.clock.now()
        changed = self.db.execute(
            "UPDATE deliveries SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1"
            " WHERE user_id = ? AND id = ? AND status = 'pending' AND next_attempt_at <= ?"
            " AND (claimed_until IS NULL OR claimed_until < ? OR claimed_by = ?)",
            (owner, at + ttl, user_id, delivery_id, at, at, owner),
        )
        return self.get(user_id, delivery_id) if changed == 1 else None

    def mark_sent(self, user_id: str, delivery_id: int, owner: str, ids: list[str]) -> None:
        self.db.execute(
            "UPDATE deliveries SET status = 'sent', sent_at = ?, platform_ids = ?,"
            " claimed_by = NULL, claimed_until = NULL WHERE user_id = ? AND id = ?"
            " AND claimed_by = ?",
            (self.db.clock.now(), json.dumps(ids), user_id, delivery_id, owner),
        )

    def record_progress(self, user_id: str, delivery_id: int, owner: str, ids: list[str]) -> None:
        """Remember the parts of a long reply already sent, so a retry sends only the rest."""
        self.db.execute(
            "UPDATE deliveries SET platform_ids = ? WHERE user_id = ? AND id = ?"
            " AND claimed_by = ?",
            (json.dumps(ids), user_id, delivery_id, owner),
        )

    def mark_retry(
        self, user_id: str, delivery_id: int, owner: str, *, error: str, retry_at: float | None
    ) -> None:
        """Release a failed attempt: retry at ``retry_at``, or give up when it is None."""
        status = "pending" if retry_at is not None else "failed"
        self.db.execute(
            "UPDATE deliveries SET status = ?, last_error = ?, next_attempt_at = ?,"
            " claimed_by = NULL, claimed_until = NULL WHERE user_id = ? AND id = ?"
            " AND claimed_by = ?",
            (status, error, retry_at or self.db.clock.now(), user_id, delivery_id, owner),
        )

    def hold(
        self, user_id: str, delivery_id: int, owner: str, *, reopen_id: str, until: float,
        note: str,
    ) -> None:
        """Keep a claimed delivery pending until ``until`` (or until ``release_held``): a
        template (``reopen_id``) asked the person to write back."""
        self.db.execute(
            "UPDATE deliveries SET held_at = coalesce(held_at, ?), reopen_id = ?,"
            " next_attempt_at = ?, last_error = ?, claimed_by = NULL, claimed_until = NULL"
            " WHERE user_id = ? AND id = ? AND claimed_by = ?",
            (self.db.clock.now(), reopen_id, until, note, user_id, delivery_id, owner),
        )

    def reopen_sent(self, user_id: str, chat_key: str, *, since: float) -> str | None:
        """A template already sent to the chat since ``since`` for a delivery still held."""
        row = self.db.one(
            "SELECT reopen_id FROM deliveries WHERE user_id = ? AND chat_key = ?"
            " AND status = 'pending' AND held_at >= ? AND reopen_id IS NOT NULL"
            " ORDER BY id LIMIT 1",
            (user_id, chat_key, since),
        )
        return None if row is None else str(row["reopen_id"])

    def reopened_by(self, user_id: str, chat_key: str, reopen_id: str) -> bool:
        """Whether ``reopen_id`` is a template sent to this user's chat for replies that are
        still held or went out (not given up)."""
        return self.db.one(
            "SELECT 1 FROM deliveries WHERE user_id = ? AND chat_key = ? AND reopen_id = ?"
            " AND held_at IS NOT NULL AND status != 'failed' LIMIT 1",
            (user_id, chat_key, reopen_id),
        ) is not None

    def release_held(self, user_id: str, chat_key: str) -> list[int]:
        """The person wrote back: the chat's held deliveries are due now (oldest first)."""
        rows = self.db.query(
            "SELECT id FROM deliveries WHERE user_id = ? AND chat_key = ?"
            " AND status = 'pending' AND held_at IS NOT NULL ORDER BY id",
            (user_id, chat_key),
        )
        ids = [int(row["id"]) for row in rows]
        if ids:
            self.db.execute(
                "UPDATE deliveries SET next_attempt_at = ? WHERE user_id = ? AND chat_key = ?"
                " AND status = 'pending' AND held_at IS NOT NULL",
                (self.db.clock.now(), user_id, chat_key),
            )
        return ids

    def due(self, *, limit: int = 100) -> list[tuple[str, int]]:
        """System sweep: (user_id, id) of pending deliveries whose time has come."""
        at = self.db.clock.now()
        rows = self.db.query(
            "SELECT user_id, id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ?"
            " AND (claimed_until IS NULL OR claimed_until < ?) ORDER BY id LIMIT ?",
            (at, at, limit),
        )
        return [(row["user_id"], row["id"]) for row in rows]

    def unread(self, user_id: str, platform: str, *, limit: int = 100) -> list[Delivery]:
        """The user's deliveries on ``platform`` nobody has read yet, oldest first."""
        rows = self.db.query(
            "SELECT * FROM deliveries WHERE user_id = ? AND platform = ? AND read_at IS NULL"
            " ORDER BY id LIMIT ?",
            (user_id, platform, limit),
        )
        return [Delivery.from_row(row) for row in rows]

    def mark_read(self, user_id: str, platform: str, *, up_to: int) -> int:
        """Mark the user's deliveries on ``platform`` with ids up to ``up_to`` read."""
        return self.db.execute(
            "UPDATE deliveries SET read_at = ? WHERE user_id = ? AND platform = ?"
            " AND read_at IS NULL AND id <= ?",
            (self.db.clock.now(), user_id, platform, up_to),
        )

    def mark_one_read(self, user_id: str, delivery_id: int) -> None:
        self.db.execute(
            "UPDATE deliveries SET read_at = coalesce(read_at, ?) WHERE user_id = ? AND id = ?",
            (self.db.clock.now(), user_id, delivery_id),
        )

    def troubled(self, user_id: str, *, limit: int = 50) -> list[Delivery]:
        """The user's deliveries given up (failed) or still retrying after a failure."""
        rows = self.db.query(
            "SELECT * FROM deliveries WHERE user_id = ? AND (status = 'failed'"
            " OR (status = 'pending' AND attempts > 0)) ORDER BY created_at DESC LIMIT ?",
            (user_id, limit),
        )
        return [Delivery.from_row(row) for row in rows]

    def trouble_counts(self) -> dict[str, tuple[int, int]]:
        """System summary (the owner's platforms page): per platform, how many deliveries are
        retrying after a failure and how many were given up, across all users. Counts only."""
        rows = self.db.query(
            "SELECT platform, SUM(status = 'pending' AND attempts > 0) AS retrying,"
            " SUM(status = 'failed') AS failed FROM deliveries"
            " WHERE status = 'failed' OR (status = 'pending' AND attempts > 0)"
            " GROUP BY platform",
        )
        return {row["platform"]: (int(row["retrying"] or 0), int(row["failed"] or 0))
                for row in rows}

    def for_chat(self, user_id: str, chat_key: str) -> list[Delivery]:
        rows = self.db.query(
            "SELECT * FROM deliveries WHERE user_id = ? AND chat_key = ? ORDER BY id",
            (user_id, chat_key),
        )
        return [Delivery.from_row(row) for row in rows]

    def for_question(self, user_id: str, chat_key: str, question_id: str) -> Delivery | None:
        """The delivery that carried a ``clarify`` question's buttons (its target's choices)."""
        row = self.db.one(
            "SELECT * FROM deliveries WHERE user_id = ? AND chat_key = ?"
            " AND json_extract(target, '$.choices.id') = ? ORDER BY id DESC LIMIT 1",
            (user_id, chat_key, question_id))
        return Delivery.from_row(row) if row else None
