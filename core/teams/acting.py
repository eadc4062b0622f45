"""Who a team command acts as, and what it may show where it was sent.

In a direct chat the chat's user acts. In a group chat (whose sessions and memory belong to
the group, not to anyone in it) the *sender* acts, so an admin can approve a note or bind the
group from the team's own chat, and ``/remember team:`` there writes as the person who said
it. A reply in a group is read by everyone present, members of the team or not, so there:
team notes are shown only for a team bound to that group (the sender a member), and what only
admins may read (held notes, waiting skills, the audit log) is answered in a direct chat only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import IrisUsageError, NotFound

if TYPE_CHECKING:
    from core.store import Store

ADMIN_READS = ("pending", "audit", "skills")


@dataclass(frozen=True)
class Actor:
    user_id: str  # the person acting
    group: str | None = None  # the group chat's user id, when sent in a group

    def bound_here(self, store: Store) -> list[str]:
        """The teams bound to this group that the sender is a member of (none in a direct chat)."""
        return [] if self.group is None else store.team_bindings.bound_at(self.user_id, self.group)


def actor(store: Store, chat_user: str, account: str) -> Actor:
    if store.users.get(chat_user).kind != "group":
        return Actor(chat_user)
    try:
        return Actor(store.users.resolve(account), chat_user)
    except NotFound:
        raise IrisUsageError(
            "Iris does not know you yet: write to Iris in a direct chat first"
        ) from None


def check_shown_here(store: Store, who: Actor, verb: str, team: str) -> None:
    """Refuse, in a group, a read that would show the group what it may not see."""
    if who.group is None:
        return
    if verb in ADMIN_READS:
        raise IrisUsageError(
            f"/team {verb} shows what only team admins may read: send it to Iris in a direct chat"
        )
    if team.lower() not in [name.lower() for name in who.bound_here(store)]:
        raise IrisUsageError(
            f"this group is not bound to {team}, so its notes would be shown to people outside "
            "it: send /team notes in a direct chat"
        )
