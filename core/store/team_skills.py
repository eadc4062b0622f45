"""Team skill rows: proposed versions with their files and findings, the version members are
offered, and its history. Every call names the acting user and is checked against that user's
membership through ``Teams`` (a non-member raises ``NotAMember``, a member acting as an admin
``NotPermitted``); ``offered`` reads only the teams the user belongs to, in the same query. The
rules (what is shared, scanning, provenance) live in ``core.teams.skills``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from core.errors import IrisUsageError, NotFound
from core.store.db import Database, Row
from core.store.teams import Teams

State = Literal["proposed", "quarantined", "approved", "rejected", "rolled_back"]
OFFERED_COLUMNS = (
    "v.team_id, t.name AS team_name, v.name, v.version, v.user_id, v.description, v.tags,"
    " v.category, v.search_text, v.created_at, v.decided_at"
)


@dataclass(frozen=True)
class TeamSkillVersion:
    team_id: str
    name: str
    version: int
    proposer: str
    description: str
    tags: tuple[str, ...]
    category: str | None
    search_text: str
    state: State
    note: str
    created_at: float
    decided_by: str | None
    decided_at: float | None
    findings: list[dict[str, Any]]
    files: dict[str, str]  # path -> text

    @classmethod
    def from_row(cls, row: Row) -> TeamSkillVersion:
        return cls(
            row["team_id"], row["name"], row["version"], row["user_id"], row["description"],
            tuple(json.loads(row["tags"])), row["category"], row["search_text"], row["state"],
            row["note"], row["created_at"], row["decided_by"], row["decided_at"],
            json.loads(row["findings"]), json.loads(row["files"]),
        )  # fmt: skip


@dataclass(frozen=True)
class OfferedSkill:
    """An approved team skill as one member's index sees it (no file contents)."""

    team_id: str
    team_name: str
    name: str
    version: int
    proposer: str
    description: str
    tags: tuple[str, ...]
    category: str | None
    search_text: str
    created_at: float
    approved_at: float

    @classmethod
    def from_row(cls, row: Row) -> OfferedSkill:
        return cls(
            row["team_id"], row["team_name"], row["name"], row["version"], row["user_id"],
            row["description"], tuple(json.loads(row["tags"])), row["category"],
            row["search_text"], row["created_at"], row["decided_at"] or row["created_at"],
        )  # fmt: skip


@dataclass(frozen=True)
class Proposal:
    name: str
    description: str
    tags: tuple[str, ...]
    category: str | None
    search_text: str
    files: dict[str, str]
    findings: list[dict[str, Any]]
    note: str = ""


class TeamSkills:
    def __init__(self, db: Database, teams: Teams):
        self.db = db
        self.teams = teams

    # -- reads --------------------------------------------------------------------------------
    def offered(self, user_id: str) -> list[OfferedSkill]:
        """The approved skills of every team ``user_id`` belongs to now, oldest team first."""
        rows = self.db.query(
            f"SELECT {OFFERED_COLUMNS} FROM team_members m"
            " JOIN teams t ON t.id = m.team_id"
            " JOIN team_skills s ON s.team_id = m.team_id"
            " JOIN team_skill_versions v ON v.team_id = s.team_id AND v.name = s.name"
            " AND v.version = s.approved_version"
            " WHERE m.user_id = ? ORDER BY m.added_at, t.name, v.name",
            (user_id,),
        )
        return [OfferedSkill.from_row(r) for r in rows]

    def approved(self, actor: str, team_id: str, name: str) -> TeamSkillVersion:
        """The version members are offered, with its files."""
        self.teams.require(team_id, actor)
        row = self.db.one(
            "SELECT v.* FROM team_skills s JOIN team_skill_versions v ON v.team_id = s.team_id"
            " AND v.name = s.name AND v.version = s.approved_version"
            " WHERE s.team_id = ? AND s.name = ?",
            (team_id, name),
        )
        if not row:
            raise NotFound(f"the team has no approved skill {name!r}")
        return TeamSkillVersion.from_row(row)

    def version(self, actor: str, team_id: str, name: str, version: int) -> TeamSkillVersion:
        self.teams.require(team_id, actor)
        return self._version(team_id, name, version)

    def history(self, actor: str, team_id: str, name: str) -> list[TeamSkillVersion]:
        self.teams.require(team_id, actor)
        rows = self.db.query(
            "SELECT * FROM team_skill_versions WHERE team_id = ? AND name = ? ORDER BY version",
            (team_id, name),
        )
        return [TeamSkillVersion.from_row(r) for r in rows]

    def proposals(self, actor: str, team_id: str) -> list[TeamSkillVersion]:
        """Versions waiting for an admin (proposed or quarantined), oldest first."""
        self.teams.require(team_id, actor, "admin")
        rows = self.db.query(
            "SELECT * FROM team_skill_versions WHERE team_id = ?"
            " AND state IN ('proposed', 'quarantined') ORDER BY created_at, name, version",
            (team_id,),
        )
        return [TeamSkillVersion.from_row(r) for r in rows]

    # -- writes -------------------------------------------------------------------------------
    def propose(self, actor: str, team_id: str, proposal: Proposal) -> TeamSkillVersion:
        """A new version from a member: ``quarantined`` when it has findings, else
        ``proposed``; never offered until an admin approves it."""
        state: State = "quarantined" if proposal.findings else "proposed"
        now = self.db.clock.now()
        with self.db.transaction():
            self.teams.require(team_id, actor)
            self.db.execute(
                "INSERT INTO team_skills (team_id, name, user_id, created_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (team_id, name) DO NOTHING",
                (team_id, proposal.name, actor, now),
            )
            number = int(
                self.db.scalar(
                    "SELECT coalesce(max(version), 0) + 1 FROM team_skill_versions"
                    " WHERE team_id = ? AND name = ?",
                    (team_id, proposal.name),
                )
            )
            self.db.execute(
                "INSERT INTO team_skill_versions (team_id, name, version, user_id, description,"
                " tags, category, search_text, files, findings, state, note, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    team_id, proposal.name, number, actor, proposal.description,
                    json.dumps(list(proposal.tags)), proposal.category, proposal.search_text,
                    json.dumps(proposal.files, sort_keys=True), json.dumps(proposal.findings),
                    state, proposal.note, now,
                ),
            )  # fmt: skip
            detail = f"{proposal.name} v{number}" + (" (quarantined)" if proposal.findings else "")
            self.teams.audit_write(team_id, actor, "skill.propose", detail)
            return self._version(team_id, proposal.name, number)

    def decide(self, actor: str, team_id: str, name: str, version: int, approve: bool) -> None:
        """An admin approves a proposed version (it becomes what members are offered) or
        rejects a proposed or quarantined one. A quarantined version cannot be approved."""
        with self.db.transaction():
            self.teams.require(team_id, actor, "admin")
            found = self._version(team_id, name, version)
            if found.state not in ("proposed", "quarantined"):
                raise IrisUsageError(f"{name} v{version} was decided already ({found.state})")
            if approve and found.state == "quarantined":
                raise IrisUsageError(
                    f"{name} v{version} is quarantined ({len(found.findings)} finding(s)); "
                    "reject it, and have a clean version proposed"
                )
            self._set_state(team_id, name, version, "approved" if approve else "rejected", actor)
            if approve:
                self._offer(team_id, name, version)
            action = "skill.approve" if approve else "skill.reject"
            self.teams.audit_write(team_id, actor, action, f"{name} v{version}")

    def rollback(self, actor: str, team_id: str, name: str, version: int | None = None) -> int:
        """An admin offers an earlier approved ``version`` again (default: the one approved
        before the current); the current one becomes ``rolled_back``. Returns the version."""
        with self.db.transaction():
            self.teams.require(team_id, actor, "admin")
            row = self.db.one(
                "SELECT approved_version FROM team_skills WHERE team_id = ? AND name = ?",
                (team_id, name),
            )
            current = row["approved_version"] if row else None
            if current is None:
                raise NotFound(f"the team has no approved skill {name!r}")
            once = [
                int(r["version"])
                for r in self.db.query(
                    "SELECT version FROM team_skill_versions WHERE team_id = ? AND name = ?"
                    " AND state IN ('approved', 'rolled_back') AND version != ?"
                    " ORDER BY version",
                    (team_id, name, current),
                )
            ]
            if version is None:
                earlier = [v for v in once if v < current]
                if not earlier:
                    raise IrisUsageError(f"{name} has no earlier approved version")
                version = earlier[-1]
            elif version not in once:
                known = ", ".join(str(v) for v in once) or "none"
                raise IrisUsageError(
                    f"{name} v{version} was never approved (earlier approved: {known})"
                )
            self._set_state(team_id, name, current, "rolled_back", actor)
            self._set_state(team_id, name, version, "approved", actor)
            self._offer(team_id, name, version)
            self.teams.audit_write(
                team_id, actor, "skill.rollback", f"{name} v{current} -> v{version}"
            )
            return version

    # -- internals ----------------------------------------------------------------------------
    def _version(self, team_id: str, name: str, version: int) -> TeamSkillVersion:
        row = self.db.one(
            "SELECT * FROM team_skill_versions WHERE team_id = ? AND name = ? AND version = ?",
            (team_id, name, version),
        )
        if not row:
            raise NotFound(f"the team has no skill {name!r} version {version}")
        return TeamSkillVersion.from_row(row)

    def _set_state(self, team_id: str, name: str, version: int, state: State, by: str) -> None:
        self.db.execute(
            "UPDATE team_skill_versions SET state = ?, decided_by = ?, decided_at = ?"
            " WHERE team_id = ? AND name = ? AND version = ?",
            (state, by, self.db.clock.now(), team_id, name, version),
        )

    def _offer(self, team_id: str, name: str, version: int) -> None:
        self.db.execute(
            "UPDATE team_skills SET approved_version = ? WHERE team_id = ? AND name = ?",
            (version, team_id, name),
        )
