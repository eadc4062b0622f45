"""Stored state of acting (``core.acting``): each user's sandbox state per backend, and
commands held for the user's approval."""

from __future__ import annotations

import json
from dataclasses import dataclass

from core.store.db import Database, Row


class SandboxStates:
    """The database implementation of ``sandboxes.SandboxStateStore``."""

    def __init__(self, db: Database):
        self.db = db

    def get_sandbox_state(self, user_id: str, backend: str) -> dict[str, str] | None:
        raw = self.db.scalar(
            "SELECT state FROM sandbox_state WHERE user_id = ? AND backend = ?",
            (user_id, backend),
        )
        return json.loads(raw) if raw else None

    def put_sandbox_state(self, user_id: str, backend: str, state: dict[str, str]) -> None:
        if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in state.items()
        ):
            raise ValueError("sandbox state must map strings to strings")
        self.db.execute(
            "INSERT INTO sandbox_state (user_id, backend, state, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (user_id, backend) DO UPDATE SET state = excluded.state,"
            " updated_at = excluded.updated_at",
            (user_id, backend, json.dumps(state, sort_keys=True), self.db.clock.now()),
        )


@dataclass(frozen=True)
class HeldCommand:
    user_id: str
    number: int
    chat_key: str
    session_id: str | None
    command: str
    workdir: str | None
    timeout: float | None
    reason: str
    status: str
    created_at: float
    expires_at: float
    decided_at: float | None
    exit_code: int | None
    output: str | None
    requested_by: str | None  # the account that asked (in a group: who may approve)

    @classmethod
    def from_row(cls, row: Row) -> HeldCommand:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


class HeldCommands:
    """Commands the agent may run only after the user's ``/approve``; numbered per user.

    Status goes pending → running → done, or pending → denied. A pending command past its
    expiry is reported as expired and can no longer be approved.
    """

    def __init__(self, db: Database):
        self.db = db

    def hold(
        self, user_id: str, *, chat_key: str, session_id: str | None, command: str,
        workdir: str | None, timeout: float | None, reason: str, ttl: float,
        requested_by: str | None = None,
    ) -> HeldCommand:
        at = self.db.clock.now()
        with self.db.transaction():
            number = 1 + (self.db.scalar(
                "SELECT max(number) FROM pending_approvals WHERE user_id = ?", (user_id,)
            ) or 0)
            self.db.execute(
                "INSERT INTO pending_approvals (user_id, number, chat_key, session_id, command,"
                " workdir, timeout, reason, created_at, expires_at, requested_by)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (user_id, number, chat_key, session_id, command, workdir, timeout, reason, at,
                 at + ttl, requested_by),
            )
        held = self.get(user_id, number)
        assert held is not None
        return held

    def get(self, user_id: str, number: int) -> HeldCommand | None:
        row = self.db.one(
            "SELECT * FROM pending_approvals WHERE user_id = ? AND number = ?", (user_id, number)
        )
        return HeldCommand.from_row(row) if row else None

    def pending(self, user_id: str, *, at: float | None = None) -> list[HeldCommand]:
        """Commands still waiting for approval (not expired), oldest first."""
        rows = self.db.query(
            "SELECT * FROM pending_approvals WHERE user_id = ? AND status = 'pending'"
            " AND expires_at > ? ORDER BY number",
            (user_id, self.db.clock.now() if at is None else at),
        )
        return [HeldCommand.from_row(row) for row in rows]

    def claim(self, user_id: str, number: int, *, at: float | None = None) -> bool:
        """Move a pending, unexpired command to running; False if someone else got it first,
        it was decided already, or it expired."""
        at = self.db.clock.now() if at is None else at
        changed = self.db.execute(
            "UPDATE pending_approvals SET status = 'running', decided_at = ? WHERE user_id = ?"
            " AND number = ? AND status = 'pending' AND expires_at > ?",
            (at, user_id, number, at),
        )
        return changed == 1

    def deny(self, user_id: str, number: int) -> bool:
        at = self.db.clock.now()
        changed = self.db.execute(
            "UPDATE pending_approvals SET status = 'denied', decided_at = ? WHERE user_id = ?"
            " AND number = ? AND status = 'pending' AND expires_at > ?",
            (at, user_id, number, at),
        )
        return changed == 1

    def finish(self, user_id: str, number: int, *, exit_code: int | None, output: str) -> None:
        self.db.execute(
            "UPDATE pending_approvals SET status = 'done', exit_code = ?, output = ?"
            " WHERE user_id = ? AND number = ? AND status = 'running'",
            (exit_code, output, user_id, number),
        )
