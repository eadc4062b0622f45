"""Places bound to a team (a group chat's scope, a Slack workspace), and joining by writing
there. Binding and unbinding need a team admin, checked here; joining is the binding's effect:
a person who may talk to Iris (pairing, allow-list) and writes in a bound place becomes a
member, unless they left or were removed since (then only an admin brings them back)."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import IrisUsageError, NotFound
from core.store.db import Database
from core.store.teams import Teams
from core.store.usage import UsageTotals


@dataclass(frozen=True)
class Binding:
    team_id: str
    place: str
    label: str
    bound_by: str
    bound_at: float


def workspace_place(account: str) -> str | None:
    """A Slack account's workspace as a place (``slack:T1/U9`` → ``slack-workspace:T1``)."""
    platform, _, ident = account.partition(":")
    if platform != "slack" or "/" not in ident:
        return None
    return f"slack-workspace:{ident.split('/', 1)[0]}"


class TeamBindings:
    def __init__(self, db: Database, teams: Teams):
        self.db = db
        self.teams = teams

    def bind(self, actor: str, team_id: str, place: str, label: str) -> None:
        with self.db.transaction():
            self.teams.require(team_id, actor, "admin")
            if self.db.one("SELECT 1 AS x FROM team_bindings WHERE team_id = ? AND place = ?",
                           (team_id, place)):
                raise IrisUsageError(f"{label} is already bound to this team")
            self.db.execute(
                "INSERT INTO team_bindings (team_id, place, label, user_id, bound_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (team_id, place, label, actor, self.db.clock.now()),
            )
            self.teams.audit_write(team_id, actor, "bind", label)

    def unbind(self, actor: str, team_id: str, place: str) -> None:
        with self.db.transaction():
            self.teams.require(team_id, actor, "admin")
            row = self.db.one("SELECT label FROM team_bindings WHERE team_id = ? AND place = ?",
                              (team_id, place))
            if not row:
                raise NotFound("this place is not bound to the team")
            self.db.execute("DELETE FROM team_bindings WHERE team_id = ? AND place = ?",
                            (team_id, place))
            self.teams.audit_write(team_id, actor, "unbind", row["label"])

    def of_team(self, actor: str, team_id: str) -> list[Binding]:
        self.teams.require(team_id, actor)
        rows = self.db.query(
            "SELECT * FROM team_bindings WHERE team_id = ? ORDER BY bound_at, place", (team_id,)
        )
        return [Binding(r["team_id"], r["place"], r["label"], r["user_id"], r["bound_at"])
                for r in rows]

    def usage(self, actor: str, team_id: str, *, since: float) -> UsageTotals:
        """What the turns answered in the team's bound group chats used since ``since``, for a
        member. Members' own chats (and their own jobs) are theirs and never counted here."""
        self.teams.require(team_id, actor)
        row = self.db.one(
            "SELECT coalesce(sum(u.calls), 0) AS calls, coalesce(sum(u.prompt_tokens), 0) AS p,"
            " coalesce(sum(u.completion_tokens), 0) AS c,"
            " coalesce(sum(u.cache_read_tokens), 0) AS cr,"
            " coalesce(sum(u.cache_write_tokens), 0) AS cw, sum(u.cost_usd) AS cost"
            " FROM usage u WHERE u.created_at >= ? AND u.user_id IN"
            " (SELECT place FROM team_bindings"
            "  WHERE team_id = ? AND substr(place, 1, 4) = 'grp_')",
            (since, team_id),
        )
        assert row is not None
        return UsageTotals(row["calls"], row["p"], row["c"], row["cr"], row["cw"], row["cost"])

    def bound_at(self, user_id: str, place: str) -> list[str]:
        """The names of the teams bound at ``place`` that ``user_id`` is a member of now (what
        a person may read about in that group chat), oldest binding first."""
        rows = self.db.query(
            "SELECT t.name FROM team_bindings b JOIN teams t ON t.id = b.team_id"
            " JOIN team_members m ON m.team_id = b.team_id AND m.user_id = ?"
            " WHERE b.place = ? ORDER BY b.bound_at, t.name",
            (user_id, place),
        )
        return [r["name"] for r in rows]

    def join_from(self, user_id: str, places: list[str]) -> list[str]:
        """``user_id`` wrote in ``places``: the names of the teams bound there that they joined
        now (none when no place is bound, they are members already, or they left or were
        removed since)."""
        if not places:
            return []
        marks = ", ".join("?" for _ in places)
        bound = self.db.query(
            f"SELECT b.team_id, b.label, b.user_id, t.name FROM team_bindings b"
            f" JOIN teams t ON t.id = b.team_id WHERE b.place IN ({marks})"
            f" ORDER BY b.bound_at, b.team_id",
            tuple(places),
        )
        joined: list[str] = []
        for row in bound:
            with self.db.transaction():
                if self.teams.role_of(row["team_id"], user_id) is not None:
                    continue
                if self.db.one(
                    "SELECT 1 AS x FROM team_audit WHERE team_id = ? AND detail = ?"
                    " AND action IN ('leave', 'remove')",
                    (row["team_id"], user_id),
                ):
                    continue
                self.teams.join(row["team_id"], user_id, row["user_id"])
                self.teams.audit_write(row["team_id"], user_id, "join",
                                       f"{user_id} via {row['label']}")
                joined.append(row["name"])
        return joined
