"""The team skill library's rules, shared by ``/skills share``, ``/team skills|approve|reject|
rollback`` and ``iris team …``: each function acts as ``actor`` (a user id), lets the store
check membership and role, and returns the lines to show.

A member shares one of their *own* library skills (never a bundled one, never someone else's):
its current files are copied, scanned like an imported skill, and proposed; a version with
findings is quarantined, shown to admins with each finding at file:line, and cannot be
approved. Approved, it is offered to every member (``core.skills.team_offers``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import IrisUsageError, NotFound
from core.skills.findings import FileFinding, summary
from core.teams.manage import label

if TYPE_CHECKING:
    from core.skills.library import SkillLibrary
    from core.store import Store
    from core.store.team_skills import TeamSkillVersion


def share(library: SkillLibrary, actor: str, team_ref: str | None, name: str) -> str:
    """Propose ``actor``'s own skill ``name`` to a team (their only team when none is named)."""
    from core.skills.team_offers import proposal
    from core.teams.notes import pick_team

    store = library.store
    team_id = pick_team(store, actor, team_ref)
    own = library.catalog.get(actor, name)
    if own is None or own.status == "archived":
        raise NotFound(
            f"you have no skill named {name!r} of your own to share (/skills lists them)"
        )
    snap = library.snapshot(actor, name, own.version)
    made = proposal(
        name, snap.all_files(), note=f"shared from {label(store, actor)}'s v{own.version}"
    )
    version = store.team_skills.propose(actor, team_id, made)
    team = store.teams.find(actor, team_id).name
    if version.findings:
        return (
            f"{name} v{version.version} was quarantined in {team}: "
            f"{summary(_findings(version))}. It will not be offered; fix it and share again."
        )
    return (
        f"{name} v{version.version} proposed to {team}; a team admin decides (/team skills {team})."
    )


def _findings(version: TeamSkillVersion) -> list[FileFinding]:
    return [FileFinding.from_dict(f) for f in version.findings]


def findings_shown(version: TeamSkillVersion) -> list[tuple[FileFinding, str]]:
    """Each finding of ``version`` with the line it points at (one line, secrets masked,
    invisible characters shown; empty when it names no line): what admins review."""
    from core.skills.quarantine import line_text

    return [
        (finding, line_text(version.files.get(finding.path, "").encode("utf-8"), finding.line))
        for finding in _findings(version)
    ]


def review(store: Store, actor: str, team_ref: str) -> str:
    """What the team offers; for admins also every proposed or quarantined version, with its
    findings at file:line and how it differs from the version in use."""
    team = store.teams.find(actor, team_ref)
    offered = [o for o in store.team_skills.offered(actor) if o.team_id == team.id]
    lines = [
        f"Skills {team.name} offers: "
        + (", ".join(f"{o.name} v{o.version}" for o in offered) or "none yet")
    ]
    if store.teams.require(team.id, actor) == "member":
        return "\n".join([*lines, "Team admins review what members share."])
    waiting = store.team_skills.proposals(actor, team.id)
    in_use = {o.name: o.version for o in offered}
    lines.append(f"Waiting for an admin in {team.name}:" if waiting else "Nothing is waiting.")
    for v in waiting:
        state = f"quarantined: {summary(_findings(v))}" if v.findings else "proposed"
        lines.append(
            f"- {v.name} v{v.version} by {label(store, v.proposer)} ({state}): "
            f"{' '.join(v.description.split())[:160]}"
        )
        for finding, shown in findings_shown(v):
            lines.append(f"    {finding.where()}: {finding.label()}")
            if shown:
                lines.append(f"      {shown}")
        if v.name in in_use:
            current = store.team_skills.version(actor, team.id, v.name, in_use[v.name])
            lines += [
                f"    {line}" for line in diff(current.files, v.files, in_use[v.name], v.version)
            ]
    return "\n".join(lines)


def diff(
    old: dict[str, str], new: dict[str, str], old_version: int, new_version: int, limit: int = 40
) -> list[str]:
    """A unified diff of every file between two versions, at most ``limit`` lines, each line
    clipped and with secrets masked and invisible characters shown."""
    import difflib

    from core.security.findings import clip

    out: list[str] = []
    for path in sorted(set(old) | set(new)):
        out += difflib.unified_diff(
            old.get(path, "").splitlines(), new.get(path, "").splitlines(),
            f"v{old_version}/{path}", f"v{new_version}/{path}", n=1, lineterm="",
        )  # fmt: skip
    shown = [clip(line, 0, 0, 160) for line in out[:limit]]
    if len(out) > limit:
        shown.append(f"… {len(out) - limit} more diff lines")
    return shown or [f"(same files as v{old_version})"]


def _number(version: str) -> int:
    number = version.lower().removeprefix("v")
    if not number.isdigit():
        raise IrisUsageError(f"bad version {version!r}: a number, e.g. 2 or v2")
    return int(number)


def _pick_version(store: Store, actor: str, team_id: str, name: str, version: str | None) -> int:
    if version is not None:
        return _number(version)
    waiting = [v for v in store.team_skills.proposals(actor, team_id) if v.name == name]
    if not waiting:
        raise NotFound(f"no version of {name!r} is waiting for a decision")
    return waiting[-1].version


def decide(
    store: Store, actor: str, team_ref: str, name: str, approve: bool, version: str | None = None
) -> str:
    team = store.teams.find(actor, team_ref)
    number = _pick_version(store, actor, team.id, name, version)
    store.team_skills.decide(actor, team.id, name, number, approve)
    if approve:
        return f"{name} v{number} is now offered to every member of {team.name}."
    return f"{name} v{number} rejected."


def rollback(store: Store, actor: str, team_ref: str, name: str, version: str | None = None) -> str:
    team = store.teams.find(actor, team_ref)
    wanted = None if version is None else _number(version)
    number = store.team_skills.rollback(actor, team.id, name, wanted)
    return f"{team.name} now offers {name} v{number} again."
