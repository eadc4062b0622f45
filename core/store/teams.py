"""Teams, members with roles, and the audit log. Every read and write names the acting user and
is checked against that user's membership here, at the store layer: a non-member's call raises
``NotAMember`` and a member acting above their role raises ``NotPermitted`` (nothing changes)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from core.errors import IrisUsageError, NotFound
from core.ids import new_id
from core.store.db import Database, Row

Role = Literal["owner", "admin", "member"]
ROLES: tuple[Role, ...] = ("owner", "admin", "member")
RANK = {"member": 0, "admin": 1, "owner": 2}
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


class NotAMember(IrisUsageError):
    """The acting user is not (or no longer) a member of the team."""


class NotPermitted(IrisUsageError):
    """The acting user is a member, but their role does not allow this."""


@dataclass(frozen=True)
class Team:
    id: str
    name: str
    created_by: str
    created_at: float


@dataclass(frozen=True)
class Member:
    team_id: str
    user_id: str
    role: Role
    added_by: str
    added_at: float

    @classmethod
    def from_row(cls, row: Row) -> Member:
        return cls(row["team_id"], row["user_id"], row["role"], row["added_by"], row["added_at"])


@dataclass(frozen=True)
class AuditEntry:
    team_id: str
    number: int
    actor: str
    action: str
    detail: str
    at: float


def _team(row: Row) -> Team:
    return Team(row["id"], row["name"], row["user_id"], row["created_at"])


def check_role(role: str) -> Role:
    if role not in ROLES:
        raise IrisUsageError(f"unknown role {role!r} (owner, admin or member)")
    return role


class Teams:
    def __init__(self, db: Database):
        self.db = db

    # -- checks -------------------------------------------------------------------------------
    def role_of(self, team_id: str, user_id: str) -> Role | None:
        row = self.db.one(
            "SELECT role FROM team_members WHERE team_id = ? AND user_id = ?", (team_id, user_id)
        )
        return row["role"] if row else None

    def require(self, team_id: str, actor: str, at_least: Role = "member") -> Role:
        """The actor's role in the team; NotAMember / NotPermitted when it falls short."""
        role = self.role_of(team_id, actor)
        if role is None:
            raise NotAMember(f"{actor} is not a member of this team")
        if RANK[role] < RANK[at_least]:
            raise NotPermitted(f"this needs a team {at_least}; {actor} is a {role}")
        return role

    def find(self, actor: str, ref: str) -> Team:
        """The team named or numbered ``ref``, for a member of it. A non-member learns nothing
        more than a missing team would tell them."""
        row = self.db.one("SELECT * FROM teams WHERE id = ? OR name = ?", (ref, ref))
        if not row or self.role_of(row["id"], actor) is None:
            raise NotAMember(f"no team {ref!r} that {actor} belongs to")
        return _team(row)

    # -- changes ------------------------------------------------------------------------------
    def create(self, actor: str, name: str) -> Team:
        name = name.strip().lower()
        if not NAME_RE.match(name):
            raise IrisUsageError(
                f"bad team name {name!r}: 1-40 of a-z, 0-9, '-' or '_', not starting with - or _"
            )
        now = self.db.clock.now()
        team_id = new_id("team")
        with self.db.transaction():
            if self.db.one("SELECT 1 AS x FROM teams WHERE name = ?", (name,)):
                raise IrisUsageError(f"a team named {name!r} already exists")
            self.db.execute(
                "INSERT INTO teams (id, name, user_id, created_at) VALUES (?, ?, ?, ?)",
                (team_id, name, actor, now),
            )
            self._put_member(team_id, actor, "owner", actor, now)
            self.audit_write(team_id, actor, "create", name)
        return Team(team_id, name, actor, now)

    def add(self, actor: str, team_id: str, user_id: str, role: str = "member") -> None:
        role = check_role(role)
        with self.db.transaction():
            mine = self.require(team_id, actor, "admin")
            if RANK[role] > RANK[mine]:
                raise NotPermitted(f"a team {mine} cannot make someone {role}")
            if self.role_of(team_id, user_id) is not None:
                raise IrisUsageError(f"{user_id} is already a member")
            self._put_member(team_id, user_id, role, actor, self.db.clock.now())
            self.audit_write(team_id, actor, "add", f"{user_id} as {role}")

    def join(self, team_id: str, user_id: str, invited_by: str) -> None:
        """``user_id`` joins as a member through a place an admin bound (``TeamBindings``);
        the caller has checked the binding and that they are not a member."""
        self._put_member(team_id, user_id, "member", invited_by, self.db.clock.now())

    def remove(self, actor: str, team_id: str, user_id: str) -> None:
        """An admin removes a member (an owner only by an owner), or a member leaves."""
        with self.db.transaction():
            mine = self.require(team_id, actor)
            theirs = self.role_of(team_id, user_id)
            if theirs is None:
                raise NotFound(f"{user_id} is not a member")
            if actor != user_id and (RANK[mine] < RANK["admin"] or RANK[theirs] > RANK[mine]):
                raise NotPermitted(f"a team {mine} cannot remove a {theirs}")
            if theirs == "owner" and self._owners(team_id) == 1:
                raise IrisUsageError("the team's last owner cannot leave; make another owner first")
            self.db.execute(
                "DELETE FROM team_members WHERE team_id = ? AND user_id = ?", (team_id, user_id)
            )
            # Their open sessions' frozen prompts hold the team's notes: thawed, so the next
            # turn builds a prompt without them.
            self.db.execute(
                "UPDATE sessions SET system_prompt = NULL WHERE user_id = ?"
                " AND system_prompt IS NOT NULL",
                (user_id,),
            )
            action = "leave" if actor == user_id else "remove"
            self.audit_write(team_id, actor, action, user_id)

    def set_role(self, actor: str, team_id: str, user_id: str, role: str) -> None:
        role = check_role(role)
        with self.db.transaction():
            mine = self.require(team_id, actor, "admin")
            theirs = self.role_of(team_id, user_id)
            if theirs is None:
                raise NotFound(f"{user_id} is not a member")
            if max(RANK[role], RANK[theirs]) > RANK[mine] or (
                mine != "owner" and RANK[theirs] >= RANK[mine] and actor != user_id
            ):
                raise NotPermitted(f"a team {mine} cannot change a {theirs} to {role}")
            if theirs == "owner" and role != "owner" and self._owners(team_id) == 1:
                raise IrisUsageError("the team's last owner cannot step down; make another first")
            self.db.execute(
                "UPDATE team_members SET role = ? WHERE team_id = ? AND user_id = ?",
                (role, team_id, user_id),
            )
            self.audit_write(team_id, actor, "role", f"{user_id}: {theirs} -> {role}")

    # -- reads --------------------------------------------------------------------------------
    def members(self, actor: str, team_id: str) -> list[Member]:
        self.require(team_id, actor)
        rows = self.db.query(
            "SELECT * FROM team_members WHERE team_id = ? ORDER BY added_at, user_id", (team_id,)
        )
        return [Member.from_row(r) for r in rows]

    def of_user(self, user_id: str) -> list[tuple[Team, Role]]:
        """The teams ``user_id`` belongs to now (their own view: no one else's)."""
        rows = self.db.query(
            "SELECT t.*, m.role FROM team_members m JOIN teams t ON t.id = m.team_id"
            " WHERE m.user_id = ? ORDER BY t.name",
            (user_id,),
        )
        return [(_team(r), r["role"]) for r in rows]

    def audit(self, actor: str, team_id: str, limit: int = 100) -> list[AuditEntry]:
        self.require(team_id, actor)
        rows = self.db.query(
            "SELECT * FROM team_audit WHERE team_id = ? ORDER BY number DESC LIMIT ?",
            (team_id, limit),
        )
        return [
            AuditEntry(r["team_id"], r["number"], r["user_id"], r["action"], r["detail"], r["at"])
            for r in rows
        ]

    # -- internals ----------------------------------------------------------------------------
    def audit_write(self, team_id: str, actor: str, action: str, detail: str) -> None:
        """Append to the audit log (callers have checked the actor; inside their transaction)."""
        self.db.execute(
            "INSERT INTO team_audit (team_id, number, user_id, action, detail, at) VALUES"
            " (?, (SELECT coalesce(max(number), 0) + 1 FROM team_audit WHERE team_id = ?),"
            " ?, ?, ?, ?)",
            (team_id, team_id, actor, action, detail[:500], self.db.clock.now()),
        )

    def _put_member(self, team_id: str, user_id: str, role: Role, by: str, at: float) -> None:
        self.db.execute(
            "INSERT INTO team_members (team_id, user_id, role, added_by, added_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (team_id, user_id, role, by, at),
        )

    def _owners(self, team_id: str) -> int:
        return int(
            self.db.scalar(
                "SELECT count(*) FROM team_members WHERE team_id = ? AND role = 'owner'", (team_id,)
            )
        )
