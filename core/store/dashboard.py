"""Rows of the web dashboard's sign-in links and sessions (``dashboard_links``,
``dashboard_sessions``). Tokens arrive here already hashed; lifetimes and who may hold an owner
session are ``core.dashboard``'s rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from core.store.db import Database, Row


@dataclass(frozen=True)
class DashboardSession:
    id: str
    user_id: str
    is_owner: bool
    csrf: str
    user_agent: str | None
    created_at: float
    last_seen_at: float
    expires_at: float
    revoked_at: float | None

    @classmethod
    def from_row(cls, row: Row) -> DashboardSession:
        return cls(
            id=row["id"], user_id=row["user_id"], is_owner=bool(row["is_owner"]),
            csrf=row["csrf"], user_agent=row["user_agent"], created_at=row["created_at"],
            last_seen_at=row["last_seen_at"], expires_at=row["expires_at"],
            revoked_at=row["revoked_at"],
        )


class DashboardAccess:
    def __init__(self, db: Database):
        self.db = db

    def add_link(self, token_hash: str, *, user_id: str, is_owner: bool, issued_by: str,
                 at: float, expires_at: float) -> None:
        self.db.execute(
            "INSERT INTO dashboard_links (token_hash, user_id, is_owner, issued_by, created_at,"
            " expires_at) VALUES (?, ?, ?, ?, ?, ?)",
            (token_hash, user_id, int(is_owner), issued_by, at, expires_at),
        )

    def use_link(self, token_hash: str, *, at: float) -> Row | None:
        """Compare-and-set an unused, unexpired link to used; its row, or None when the link
        is unknown, used or expired."""
        with self.db.transaction():
            changed = self.db.execute(
                "UPDATE dashboard_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL"
                " AND expires_at > ?",
                (at, token_hash, at),
            )
            if changed != 1:
                return None
            return self.db.one("SELECT * FROM dashboard_links WHERE token_hash = ?",
                               (token_hash,))

    def link_state(self, token_hash: str) -> Row | None:
        return self.db.one("SELECT * FROM dashboard_links WHERE token_hash = ?", (token_hash,))

    def add_session(self, session_id: str, token_hash: str, *, user_id: str, is_owner: bool,
                    csrf: str, user_agent: str | None, at: float, expires_at: float) -> None:
        self.db.execute(
            "INSERT INTO dashboard_sessions (id, token_hash, user_id, is_owner, csrf, user_agent,"
            " created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, token_hash, user_id, int(is_owner), csrf, user_agent, at, at,
             expires_at),
        )

    def live_session(self, token_hash: str, *, at: float) -> DashboardSession | None:
        row = self.db.one(
            "SELECT * FROM dashboard_sessions WHERE token_hash = ? AND revoked_at IS NULL"
            " AND expires_at > ?",
            (token_hash, at),
        )
        return DashboardSession.from_row(row) if row else None

    def seen(self, user_id: str, session_id: str, *, at: float) -> None:
        self.db.execute(
            "UPDATE dashboard_sessions SET last_seen_at = ? WHERE user_id = ? AND id = ?",
            (at, user_id, session_id),
        )

    def sessions(self, user_id: str | None = None, *, at: float) -> list[DashboardSession]:
        """Live sessions, of one user or (the operator's listing) of every user."""
        rows = self.db.query(
            "SELECT * FROM dashboard_sessions WHERE revoked_at IS NULL AND expires_at > ?"
            " AND (? IS NULL OR user_id = ?) ORDER BY created_at",
            (at, user_id, user_id),
        )
        return [DashboardSession.from_row(row) for row in rows]

    def session_owner(self, session_id: str) -> str | None:
        return cast("str | None", self.db.scalar(
            "SELECT user_id FROM dashboard_sessions WHERE id = ?", (session_id,)))

    def revoke(self, user_id: str, session_id: str, *, at: float) -> bool:
        return self.db.execute(
            "UPDATE dashboard_sessions SET revoked_at = ? WHERE user_id = ? AND id = ?"
            " AND revoked_at IS NULL",
            (at, user_id, session_id),
        ) == 1

    def revoke_all(self, user_id: str, *, at: float) -> int:
        return self.db.execute(
            "UPDATE dashboard_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL",
            (at, user_id),
        )
