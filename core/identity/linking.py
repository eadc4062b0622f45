"""``/link``: one person, several platform accounts, one user.

``/link`` from an account gives a code; ``/link CODE`` from another account (any platform)
confirms it. The merge itself runs right after that turn is committed (the turn in progress
still belongs to the redeeming user), from an after-turn hook; a crash in between leaves the
link confirmed and the next turn, or ``iris users link``, completes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.identity.accounts import AccountAccess
from core.identity.codes import looks_like_code, new_code, normalize
from core.identity.merge import MergeReport, merge_users
from core.store.db import Row

if TYPE_CHECKING:
    from core.contracts.hooks import HookContext
    from core.memory.book import Limits
    from core.store import Store

LINK_SECONDS = 600.0


@dataclass(frozen=True)
class LinkCode:
    code: str
    user_id: str
    account: str
    status: str  # pending | confirmed | merged (| expired, derived)
    created_at: float
    expires_at: float
    redeemed_by_user: str | None
    redeemed_by_account: str | None
    redeemed_at: float | None
    merged_at: float | None
    merge_report: str | None

    @classmethod
    def from_row(cls, row: Row, at: float) -> LinkCode:
        """The stored row as seen at ``at``: a pending code past its expiry reads as expired."""
        data = dict(row)
        if data["status"] == "pending" and data["expires_at"] <= at:
            data["status"] = "expired"
        return cls(**data)


class Links:
    def __init__(self, store: Store):
        self.store = store
        self.rows = store.links
        self.access = AccountAccess(store)

    def issue(self, user_id: str, account: str) -> LinkCode:
        """A fresh code for ``user_id`` (earlier unused codes of that user stop working)."""
        user = self.store.users.get(user_id)
        if user.kind != "person":
            raise IrisUsageError("/link works in a private chat with me, not in a group")
        at = self.store.clock.now()
        code = new_code()
        while not self.rows.issue(code, user_id=user_id, account=account, at=at,
                                  expires_at=at + LINK_SECONDS):
            code = new_code()
        found = self.get(code)
        assert found is not None
        return found

    def get(self, code: str) -> LinkCode | None:
        row = self.rows.get(normalize(code))
        return LinkCode.from_row(row, self.store.clock.now()) if row else None

    def is_valid(self, code: str) -> bool:
        found = self.get(code) if looks_like_code(code) else None
        return found is not None and found.status == "pending"

    def redeem(self, code: str, *, account: str, user_id: str) -> LinkCode:
        """Confirm a link from ``account`` (owned by ``user_id``). Wrong codes count towards
        the account's lockout. The merge follows with ``complete_for``."""
        if self.store.users.get(user_id).kind != "person":
            raise IrisUsageError("/link works in a private chat with me, not in a group")
        self.access.check_not_locked(account)
        wanted = normalize(code)
        found = self.get(wanted) if looks_like_code(wanted) else None
        if found is None or found.status != "pending":
            why = "has expired; send /link again on the other account" if (
                found and found.status == "expired") else "is not a valid link code"
            raise self.access.fail(account, f"{wanted or code!r} {why}")
        survivor = self.store.users.resolve(found.user_id)
        if survivor == self.store.users.resolve(user_id):
            raise IrisUsageError(f"{account} already belongs to the same user as {found.account}")
        with self.store.transaction():
            if not self.rows.confirm(wanted, user_id=user_id, account=account,
                                     at=self.store.clock.now()):
                raise IrisUsageError(f"{wanted} was used a moment ago")
            self.store.access.approve(account, f"link:{found.account}")
        self.store.access.clear_failures(account)
        confirmed = self.get(wanted)
        assert confirmed is not None
        return confirmed

    def due(self, user_id: str) -> list[LinkCode]:
        """Confirmed links involving ``user_id`` whose merge has not run yet."""
        at = self.store.clock.now()
        return [LinkCode.from_row(row, at) for row in self.rows.unmerged(user_id)]

    def complete(self, link: LinkCode, *, limits: Limits) -> MergeReport | None:
        """Run a confirmed link's merge (None when both sides are already one user)."""
        assert link.redeemed_by_user is not None
        dest = self.store.users.resolve(link.user_id)
        source = self.store.users.resolve(link.redeemed_by_user)
        report = None
        if dest != source:
            report = merge_users(
                self.store, dest, source, limits=limits, who=f"link:{link.account}"
            )
        self.rows.mark_merged(link.code, at=self.store.clock.now(),
                              report=json.dumps(report.lines() if report else []))
        return report

    def complete_for(self, user_id: str, *, limits: Limits) -> list[MergeReport]:
        return [r for link in self.due(user_id) if (r := self.complete(link, limits=limits))]


async def complete_links_after_turn(ctx: HookContext) -> list[MergeReport]:
    """The ``AfterTurn`` hook that runs merges confirmed by ``/link CODE`` (after the turn that
    confirmed them is committed), then drains chats whose pending messages moved."""
    from core.contracts.dispatch import ChatRef
    from core.lanes import in_store_lane
    from core.memory.book import Limits

    links = Links(ctx.store)
    if not await in_store_lane(ctx.user_id, links.due, ctx.user_id):
        return []
    reports = await in_store_lane(ctx.user_id, links.complete_for, ctx.user_id,
                                  limits=Limits.from_settings(ctx.settings))
    for report in reports:
        for chat_key in report.pending_chats:
            await ctx.services.dispatcher.drain(ChatRef(report.dest, chat_key))
    return reports
