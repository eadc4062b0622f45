"""DM pairing: an unknown account gets a code; the owner approves it (CLI or /approve).

A code is 8 characters, lasts an hour, at most three are pending per platform, and an approver
who enters five wrong codes within an hour is locked out for an hour.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import IrisUsageError, NotFound
from core.identity.accounts import AccountAccess
from core.identity.codes import looks_like_code, new_code, normalize
from core.messages import InboundMessage
from core.store.db import Row

if TYPE_CHECKING:
    from core.store import Store

CODE_SECONDS = 3600.0
MAX_PENDING_PER_PLATFORM = 3
APPROVED_TEXT = "You're approved: I'm Iris. Say hello!"


@dataclass(frozen=True)
class PairingRequest:
    code: str
    user_id: str
    account: str
    platform: str
    chat_id: str
    thread_id: str | None
    meta: dict[str, Any]
    display_name: str | None
    status: str  # pending | approved | revoked | expired
    created_at: float
    expires_at: float
    decided_at: float | None
    decided_by: str | None

    @classmethod
    def from_row(cls, row: Row, at: float) -> PairingRequest:
        """The stored row as seen at ``at``: a pending code past its expiry reads as expired."""
        data = dict(row)
        data["meta"] = json.loads(data["meta"] or "{}")
        if data["status"] == "pending" and data["expires_at"] <= at:
            data["status"] = "expired"
        return cls(**data)

    @property
    def chat_key(self) -> str:
        key = f"{self.platform}:{self.chat_id}"
        return f"{key}:{self.thread_id}" if self.thread_id else key


class PairingFull(IrisUsageError):
    """Too many codes are pending on this platform."""


class Pairing:
    def __init__(self, store: Store):
        self.store = store
        self.db = store.db
        self.access = AccountAccess(store.db)

    def pending_for(self, account: str) -> PairingRequest | None:
        row = self.db.one(
            "SELECT * FROM pairing_requests WHERE account = ? AND status = 'pending'"
            " AND expires_at > ? ORDER BY created_at DESC LIMIT 1",
            (account, self.db.clock.now()),
        )
        return PairingRequest.from_row(row, self.db.clock.now()) if row else None

    def pending_count(self, platform: str) -> int:
        return self.db.scalar(
            "SELECT count(*) FROM pairing_requests WHERE platform = ? AND status = 'pending'"
            " AND expires_at > ?",
            (platform, self.db.clock.now()),
        )

    def request(self, message: InboundMessage) -> PairingRequest:
        """The account's pending code, or a new one. PairingFull when the platform has too many
        pending already (then nothing is stored)."""
        existing = self.pending_for(message.account)
        if existing is not None:
            return existing
        with self.db.transaction():
            if self.pending_count(message.platform) >= MAX_PENDING_PER_PLATFORM:
                raise PairingFull(
                    f"{MAX_PENDING_PER_PLATFORM} pairing requests are already waiting on "
                    f"{message.platform}; try again later"
                )
            user_id = self.store.users.for_account(
                message.account, display_name=message.display_name
            )
            code, at = self._free_code(), self.db.clock.now()
            self.db.execute(
                "INSERT INTO pairing_requests (code, user_id, account, platform, chat_id,"
                " thread_id, meta, display_name, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    code, user_id, message.account, message.platform, message.chat_id,
                    message.thread_id, json.dumps(message.meta), message.display_name, at,
                    at + CODE_SECONDS,
                ),
            )
        found = self.get(code)
        assert found is not None
        return found

    def _free_code(self) -> str:
        while True:
            code = new_code()
            if not self.db.one("SELECT 1 AS x FROM pairing_requests WHERE code = ?", (code,)):
                return code

    def get(self, code: str) -> PairingRequest | None:
        row = self.db.one("SELECT * FROM pairing_requests WHERE code = ?", (normalize(code),))
        return PairingRequest.from_row(row, self.db.clock.now()) if row else None

    def list(self, *, include_all: bool = False) -> list[PairingRequest]:
        if include_all:
            rows = self.db.query("SELECT * FROM pairing_requests ORDER BY created_at DESC")
        else:
            rows = self.db.query(
                "SELECT * FROM pairing_requests WHERE status = 'pending' AND expires_at > ?"
                " ORDER BY created_at",
                (self.db.clock.now(),),
            )
        return [PairingRequest.from_row(row, self.db.clock.now()) for row in rows]

    def is_pending_code(self, text: str) -> bool:
        found = self.get(text) if looks_like_code(text) else None
        return found is not None and found.status == "pending"

    def approve(self, code: str, *, by: str) -> PairingRequest:
        """Approve a pending code. ``by`` is the approver's account (``cli:<name>`` for the
        CLI); wrong codes count towards its lockout."""
        self.store.users.for_account(by)
        self.access.check_not_locked(by)
        wanted = normalize(code)
        found = self.get(wanted) if looks_like_code(wanted) else None
        if found is None or found.status != "pending":
            why = {
                "expired": "has expired; they get a new one by messaging again",
                "approved": "was already approved",
                "revoked": "was revoked",
            }.get(found.status if found else "", "is not a pending pairing code")
            raise self.access.fail(by, f"{wanted or code!r} {why}")
        at = self.db.clock.now()
        with self.db.transaction():
            changed = self.db.execute(
                "UPDATE pairing_requests SET status = 'approved', decided_at = ?, decided_by = ?"
                " WHERE code = ? AND status = 'pending' AND expires_at > ?",
                (at, by, wanted, at),
            )
            if changed != 1:
                raise IrisUsageError(f"{wanted} was decided by someone else just now")
            self.access.approve(found.account, by)
            self.store.deliveries.add(
                found.user_id, source=f"pairing:{wanted}", platform=found.platform,
                chat_key=found.chat_key,
                target={"chat_id": found.chat_id, "thread_id": found.thread_id, **found.meta},
                text=APPROVED_TEXT,
            )
        self.access.clear_failures(by)
        approved = self.get(wanted)
        assert approved is not None
        return approved

    def approve_account(self, account: str, *, by: str) -> str:
        """Approve an account directly (the operator knows it); returns its user id."""
        user_id = self.store.users.for_account(account)
        self.access.approve(account, by)
        self.db.execute(
            "UPDATE pairing_requests SET status = 'approved', decided_at = ?, decided_by = ?"
            " WHERE account = ? AND status = 'pending'",
            (self.db.clock.now(), by, account),
        )
        return user_id

    def revoke(self, code_or_account: str, *, by: str) -> str:
        """Cancel a pending code, or withdraw an account's approval. Returns what was done."""
        if ":" in code_or_account:
            account = code_or_account
            if self.access.state(account) is None:
                raise NotFound(f"no account {account!r}")
            cancelled = self.db.execute(
                "UPDATE pairing_requests SET status = 'revoked', decided_at = ?, decided_by = ?"
                " WHERE account = ? AND status = 'pending'",
                (self.db.clock.now(), by, account),
            )
            withdrawn = self.access.revoke(account)
            if not (cancelled or withdrawn):
                return f"{account} had no approval or pending code; nothing changed"
            return f"{account}: access withdrawn (its data is kept)"
        code = normalize(code_or_account)
        changed = self.db.execute(
            "UPDATE pairing_requests SET status = 'revoked', decided_at = ?, decided_by = ?"
            " WHERE code = ? AND status = 'pending'",
            (self.db.clock.now(), by, code),
        )
        if changed != 1:
            raise NotFound(f"{code!r} is not a pending pairing code")
        return f"pairing code {code} revoked"
