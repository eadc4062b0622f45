"""Users and their platform accounts (``telegram:4242``, ``slack:T1/U9``, ``http:alice``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from core.errors import IrisUsageError, NotFound
from core.ids import new_id
from core.store.db import Database, Row, Statement

ACCOUNT_RE = re.compile(r"^(?P<platform>[a-z]+):(?P<id>[^\s]{1,200})$")


def split_account(account: str) -> tuple[str, str]:
    match = ACCOUNT_RE.match(account)
    if not match:
        raise IrisUsageError(f"not an account reference: {account!r} (expected platform:id)")
    return match["platform"], match["id"]


def user_row(user_id: str) -> Statement:
    return ("SELECT * FROM users WHERE id = ?", (user_id,))


@dataclass(frozen=True)
class User:
    id: str
    kind: str
    display_name: str | None
    timezone: str | None
    model: str | None
    is_owner: bool
    created_at: float
    merged_into: str | None = None  # set when this user was folded into another (linking)
    voice_replies: bool | None = None  # /voice; None: the deployment's default

    @classmethod
    def from_row(cls, row: Row) -> User:
        return cls(
            id=row["id"],
            kind=row["kind"],
            display_name=row["display_name"],
            timezone=row["timezone"],
            model=row["model"],
            is_owner=bool(row["is_owner"]),
            created_at=row["created_at"],
            merged_into=row.get("merged_into"),
            voice_replies=None if row.get("voice_replies") is None else bool(row["voice_replies"]),
        )


class Users:
    def __init__(self, db: Database):
        self.db = db

    def for_account(
        self, account: str, *, display_name: str | None = None, kind: str = "person"
    ) -> str:
        """The user owning ``account``, created (with the account) when it is new.

        Creating is one transaction of two inserts that each happen only while the account
        is unknown, followed by reading its owner: one round trip to a remote database, and
        whoever commits first wins (a second caller reads the first one's user)."""
        owner = ("SELECT user_id FROM accounts WHERE account = ?", (account,))
        row = self.db.one(*owner)
        if row:
            return cast("str", row["user_id"])
        platform, _ = split_account(account)
        user_id = new_id("grp" if kind == "group" else "usr")
        now = self.db.clock.now()
        unknown = " WHERE NOT EXISTS (SELECT 1 FROM accounts WHERE account = ?)"
        _, [rows] = self.db.write_then_read([
            ("INSERT INTO users (id, kind, display_name, created_at) SELECT ?, ?, ?, ?" + unknown,
             (user_id, kind, display_name, now, account)),
            ("INSERT INTO accounts (account, user_id, platform, display_name, created_at)"
             " SELECT ?, ?, ?, ?, ?" + unknown,
             (account, user_id, platform, display_name, now, account)),
        ], [owner])
        return str(rows[0]["user_id"])

    def resolve(self, ref: str) -> str:
        """A user id from a user id or any linked account; NotFound otherwise. A user merged
        into another (account linking) resolves to the one it became."""
        row = self.db.one("SELECT id, merged_into FROM users WHERE id = ?", (ref,))
        for _ in range(10):
            if not (row and row["merged_into"]):
                break
            row = self.db.one(
                "SELECT id, merged_into FROM users WHERE id = ?", (row["merged_into"],)
            )
        if row:
            return cast("str", row["id"])
        row = self.db.one("SELECT user_id FROM accounts WHERE account = ?", (ref,))
        if row:
            return cast("str", row["user_id"])
        if ":" not in ref:
            row = self.db.one("SELECT user_id FROM accounts WHERE account = ?", (f"http:{ref}",))
            if row:
                return cast("str", row["user_id"])
        raise NotFound(f"no user or account {ref!r}")

    def get(self, user_id: str) -> User:
        row = self.db.one(*user_row(user_id))
        if not row:
            raise NotFound(f"no user {user_id!r}")
        return User.from_row(row)

    def accounts(self, user_id: str) -> list[str]:
        rows = self.db.query(
            "SELECT account FROM accounts WHERE user_id = ? ORDER BY created_at", (user_id,)
        )
        return [row["account"] for row in rows]

    def attach(self, account: str, user_id: str) -> None:
        """Record a new platform account as ``user_id``'s (the account must not exist)."""
        platform, _ = split_account(account)
        self.db.execute(
            "INSERT INTO accounts (account, user_id, platform, created_at) VALUES (?, ?, ?, ?)",
            (account, user_id, platform, self.db.clock.now()),
        )

    def make_owner(self, user_id: str) -> None:
        self.db.execute("UPDATE users SET is_owner = 1 WHERE id = ? AND is_owner = 0", (user_id,))

    def set_model(self, user_id: str, model: str | None) -> None:
        self.db.execute("UPDATE users SET model = ? WHERE id = ?", (model, user_id))

    def set_voice_replies(self, user_id: str, on: bool | None) -> None:
        self.db.execute("UPDATE users SET voice_replies = ? WHERE id = ?",
                        (None if on is None else int(on), user_id))

    def count_people(self) -> int:
        """People (not groups), each counted once however many accounts they have linked."""
        return int(self.db.scalar(
            "SELECT count(*) FROM users WHERE kind = 'person' AND merged_into IS NULL"
        ))

    def list_all(self) -> list[User]:
        """Administrative listing for ``iris users list``."""
        return [User.from_row(r) for r in self.db.query("SELECT * FROM users ORDER BY created_at")]
