"""Places bound to a team: a group chat (its group scope, ``grp_…``) or a Slack workspace
(``slack-workspace:T…``). A person who can talk to Iris and writes there joins the team as a
member. ``user_id`` is the admin who bound the place."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE team_bindings (
            team_id TEXT NOT NULL,
            place TEXT NOT NULL,
            label TEXT NOT NULL,
            user_id TEXT NOT NULL,
            bound_at REAL NOT NULL,
            PRIMARY KEY (place, team_id)
        );
        CREATE INDEX team_bindings_by_team ON team_bindings(team_id, place);
        """
    )
