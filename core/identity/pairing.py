"""DM pairing: an unknown account gets a code; the owner approves it (CLI or /approve).

A code is 8 characters and lasts an hour. At most ``MAX_PENDING_PER_PLATFORM`` are pending per
platform: when they are all taken, a new request expires the oldest one (so strangers cannot
shut everyone else out) and the owners are told (``core.identity.pairing_notice``). An approver
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
MAX_PENDING_PER_PLATFORM = 20
DROPPED_BY = "iris:full"  # decided_by of a request expired to make room for a newer one
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
    status: str  # pending | approved | revoked | expired | dropped (to make room)
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
        if data["status"] == "expired" and data["decided_by"] == DROPPED_BY:
            data["status"] = "dropped"
        return cls(**data)

    @property
    def chat_key(self) -> str:
        key = f"{self.platform}:{self.chat_id}"
        return f"{key}:{self.thread_id}" if self.thread_id else key


@dataclass(frozen=True)
class Issued:
    """A request's pending code, and the oldest request it pushed out (the platform was full)."""

    request: PairingRequest
    dropped: PairingRequest | None = None


class Pairing:
    def __init__(self, store: Store):
        self.store = store
        self.rows = store.pairing
        self.access = AccountAccess(store)

    def _request(self, row: Row | None) -> PairingRequest | None:
        return PairingRequest.from_row(row, self.store.clock.now()) if row else None

    def pending_for(self, account: str) -> PairingRequest | None:
        return self._request(self.rows.pending_for(account, at=self.store.clock.now()))

    def pending_count(self, platform: str) -> int:
        return self.rows.pending_count(platform, at=self.store.clock.now())

    def request(self, message: InboundMessage) -> Issued:
        """The account's pending code, or a new one. When the platform already has
        ``MAX_PENDING_PER_PLATFORM`` pending, the oldest of them expires to make room."""
        existing = self.pending_for(message.account)
        if existing is not None:
            return Issued(existing)
        dropped = None
        with self.store.transaction():
            at = self.store.clock.now()
            if self.pending_count(message.platform) >= MAX_PENDING_PER_PLATFORM:
                oldest = self.rows.oldest_pending(message.platform, at=at)
                if oldest is not None and self.rows.expire(oldest["code"], by=DROPPED_BY, at=at):
                    dropped = self._request(self.rows.get(oldest["code"]))
            user_id = self.store.users.for_account(
                message.account, display_name=message.display_name
            )
            code = self._free_code()
            self.rows.add(
                code, user_id=user_id, account=message.account, platform=message.platform,
                chat_id=message.chat_id, thread_id=message.thread_id, meta=message.meta,
                display_name=message.display_name, at=at, expires_at=at + CODE_SECONDS,
            )
        found = self.get(code)
        assert found is not None
        return Issued(found, dropped)

    def _free_code(self) -> str:
        while True:
            code = new_code()
            if not self.rows.code_taken(code):
                return code

    def get(self, code: str) -> PairingRequest | None:
        return self._request(self.rows.get(normalize(code)))

    def list(self, *, include_all: bool = False) -> list[PairingRequest]:
        at = self.store.clock.now()
        rows = self.rows.all() if include_all else self.rows.pending(at=at)
        return [PairingRequest.from_row(row, at) for row in rows]

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
                "dropped": "was dropped to make room for newer requests; they get a new one "
                           "by messaging again",
                "approved": "was already approved",
                "revoked": "was revoked",
            }.get(found.status if found else "", "is not a pending pairing code")
            raise self.access.fail(by, f"{wanted or code!r} {why}")
        at = self.store.clock.now()
        with self.store.transaction():
            if not self.rows.approve(wanted, by=by, at=at):
                raise IrisUsageError(f"{wanted} was decided by someone else just now")
            self.store.access.approve(found.account, by)
            self.store.deliveries.add(
                found.user_id, source=f"pairing:{wanted}", platform=found.platform,
                chat_key=found.chat_key,
                target={"chat_id": found.chat_id, "thread_id": found.thread_id, **found.meta},
                text=APPROVED_TEXT,
            )
        self.store.access.clear_failures(by)
        approved = self.get(wanted)
        assert approved is not None
        return approved

    def approve_account(self, account: str, *, by: str) -> str:
        """Approve an account directly (the operator knows it); returns its user id."""
        user_id = self.store.users.for_account(account)
        self.store.access.approve(account, by)
        self.rows.approve_account(account, by=by, at=self.store.clock.now())
        return user_id

    def revoke(self, code_or_account: str, *, by: str) -> str:
        """Cancel a pending code, or withdraw an account's approval. Returns what was done."""
        at = self.store.clock.now()
        if ":" in code_or_account:
            account = code_or_account
            if self.store.access.state(account) is None:
                raise NotFound(f"no account {account!r}")
            cancelled = self.rows.revoke_account(account, by=by, at=at)
            withdrawn = self.store.access.revoke(account)
            if not (cancelled or withdrawn):
                return f"{account} had no approval or pending code; nothing changed"
            return f"{account}: access withdrawn (its data is kept)"
        code = normalize(code_or_account)
        if not self.rows.revoke(code, by=by, at=at):
            raise NotFound(f"{code!r} is not a pending pairing code")
        return f"pairing code {code} revoked"
