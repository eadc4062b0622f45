"""Teams, their members with roles, and the audit log of team changes. ``user_id`` is the row's
owning person: the team's creator, the member, the actor of an audited change."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE teams (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE TABLE team_members (
            team_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
            added_by TEXT NOT NULL,
            added_at REAL NOT NULL,
            PRIMARY KEY (team_id, user_id)
        );
        CREATE INDEX team_members_by_user ON team_members(user_id, team_id);
        CREATE TABLE team_audit (
            team_id TEXT NOT NULL,
            number INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            action TEXT NOT NULL,
            detail TEXT NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (team_id, number)
        );
        """
    )
