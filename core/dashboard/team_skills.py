"""What the Team page shows of a team's skill library: the skills it offers (with who proposed
each and the earlier approved versions an admin may roll back to) and, for admins, every
version waiting for a decision — the safety scan's findings at file:line with the line itself,
and a line diff against the version members use now (every line added, for a new skill).

Every read goes through ``store.team_skills`` as the viewer, so membership and role are
checked by the store exactly as for ``/team skills`` in a chat. File text shown here is
another member's: secrets are masked and invisible characters shown, line by line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.dashboard.diffs import file_diff
from core.security.credentials import mask_secrets
from core.security.untrusted import show_invisible
from core.skills.findings import FileFinding
from core.teams.skills import findings_shown

if TYPE_CHECKING:
    from core.store import Store
    from core.store.team_skills import OfferedSkill, TeamSkillVersion

DIFF_LINES = 400


@dataclass(frozen=True)
class OfferedView:
    skill: OfferedSkill
    who: str
    earlier: list[int]  # approved before, not now: what an admin may roll back to


@dataclass(frozen=True)
class WaitingView:
    version: TeamSkillVersion
    who: str
    findings: list[tuple[FileFinding, str]]  # each finding and the line it points at
    in_use: int | None  # the version members are offered now, if any
    diff: list[tuple[str, str]]  # (add|del|ctx, line) against ``in_use``

    @property
    def quarantined(self) -> bool:
        return self.version.state == "quarantined"


@dataclass(frozen=True)
class TeamSkillsView:
    offered: list[OfferedView]
    waiting: list[WaitingView]


def _shown(line: str) -> str:
    return mask_secrets(show_invisible(line))


def version_diff(
    old: dict[str, str], new: dict[str, str], limit: int = DIFF_LINES
) -> list[tuple[str, str]]:
    """Every changed file's line diff, each file under a ``── path`` heading."""
    out: list[tuple[str, str]] = []
    for path in sorted(set(old) | set(new)):
        if old.get(path) == new.get(path):
            continue
        out.append(("ctx", f"── {path}"))
        out += [(kind, _shown(line)) for kind, line in
                file_diff(old.get(path, ""), new.get(path, ""), path)]
        if len(out) >= limit:
            return [*out[:limit], ("ctx", "… (diff cut short)")]
    return out or [("ctx", "(the same files as the version in use)")]


def team_skills_view(
    store: Store, viewer: str, team_id: str, admin: bool, who: Callable[[str], str]
) -> TeamSkillsView:
    """The library of ``team_id`` as ``viewer`` may see it; ``who`` names a user id."""
    offered = [o for o in store.team_skills.offered(viewer) if o.team_id == team_id]
    in_use = {o.name: o.version for o in offered}
    views = []
    for skill in offered:
        earlier: list[int] = []
        if admin:
            earlier = [
                v.version
                for v in store.team_skills.history(viewer, team_id, skill.name)
                if v.state in ("approved", "rolled_back") and v.version != skill.version
            ]
        views.append(OfferedView(skill, who(skill.proposer), earlier))
    if not admin:
        return TeamSkillsView(views, [])
    current: dict[str, dict[str, str]] = {}
    waiting = []
    for version in store.team_skills.proposals(viewer, team_id):
        base = in_use.get(version.name)
        if base is not None and version.name not in current:
            current[version.name] = store.team_skills.version(
                viewer, team_id, version.name, base
            ).files
        before = current.get(version.name, {}) if base is not None else {}
        waiting.append(
            WaitingView(
                version=version,
                who=who(version.proposer),
                findings=findings_shown(version),
                in_use=base,
                diff=version_diff(before, version.files),
            )
        )
    return TeamSkillsView(views, waiting)
