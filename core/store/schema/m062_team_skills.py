"""The team skill library: one row per skill a team has (``approved_version`` is what members
are offered, NULL until an admin approves one), and every proposed version with its files, the
scan's findings and its state. ``user_id`` is the proposer (of the version; of the first
version for the skill row)."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE team_skills (
            team_id TEXT NOT NULL,
            name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            approved_version INTEGER,
            created_at REAL NOT NULL,
            PRIMARY KEY (team_id, name)
        );
        CREATE TABLE team_skill_versions (
            team_id TEXT NOT NULL,
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            description TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            category TEXT,
            search_text TEXT NOT NULL DEFAULT '',
            files TEXT NOT NULL,
            findings TEXT NOT NULL DEFAULT '[]',
            state TEXT NOT NULL CHECK (state IN
                ('proposed', 'quarantined', 'approved', 'rejected', 'rolled_back')),
            note TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            decided_by TEXT,
            decided_at REAL,
            PRIMARY KEY (team_id, name, version)
        );
        CREATE INDEX team_skill_versions_by_state ON team_skill_versions(team_id, state);
        """
    )
