"""What the dashboard's Team page shows: the viewer's teams, each with its members, live notes
(with their writers), the notes held for an admin (admins only), its skill library
(``core.dashboard.team_skills``), the places bound to it, what its group chats used in the last
30 days, and the audit log. Every read
goes through the store's membership checks as the viewer, so the page can show nothing the
same person could not read with ``/team`` in a chat."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from core.dashboard.team_skills import TeamSkillsView, team_skills_view
from core.store.teams import RANK, AuditEntry, Member, Role, Team
from core.store.usage import UsageTotals
from core.teams.manage import label

if TYPE_CHECKING:
    from core.store import Store
    from core.store.team_notes import TeamNote

T = TypeVar("T")
AUDIT_SHOWN = 30
USAGE_DAYS = 30


@dataclass(frozen=True)
class Named(Generic[T]):
    """A row with the person it names (their first account) beside it."""

    item: T
    who: str


@dataclass(frozen=True)
class TeamView:
    team: Team
    role: Role
    members: list[Named[Member]]
    notes: list[Named[TeamNote]]
    held: list[Named[TeamNote]]
    audit: list[Named[AuditEntry]]
    usage: UsageTotals
    places: list[str]
    skills: TeamSkillsView

    @property
    def is_admin(self) -> bool:
        return RANK[self.role] >= RANK["admin"]


def team_views(store: Store, viewer: str) -> list[TeamView]:
    """Every team ``viewer`` is a member of, as they may see it."""
    names: dict[str, str] = {}

    def who(user_id: str) -> str:
        if user_id not in names:
            names[user_id] = label(store, user_id)
        return names[user_id]

    since = store.clock.now() - USAGE_DAYS * 86400
    views = []
    for team, role in store.teams.of_user(viewer):
        admin = RANK[role] >= RANK["admin"]
        held = store.team_notes.pending(viewer, team.id) if admin else []
        views.append(TeamView(
            team=team, role=role,
            members=[Named(m, who(m.user_id)) for m in store.teams.members(viewer, team.id)],
            notes=[Named(n, who(n.author)) for n in store.team_notes.live(viewer, team.id)],
            held=[Named(n, who(n.author)) for n in held],
            audit=[Named(a, who(a.actor))
                   for a in store.teams.audit(viewer, team.id, AUDIT_SHOWN)],
            usage=store.team_bindings.usage(viewer, team.id, since=since),
            places=[b.label for b in store.team_bindings.of_team(viewer, team.id)],
            skills=team_skills_view(store, viewer, team.id, admin, who),
        ))
    return views
