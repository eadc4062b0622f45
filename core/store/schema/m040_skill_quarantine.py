"""Skills imported with safety findings wait in quarantine until the user reviews them: the
files (kept in the object store under ``quarantine/<name>/``), the findings with file and line,
and where the skill came from. Nothing here is in the library, so nothing here reaches a
prompt, the skill index or the routing vectors.

Skill outcomes: how often a turn that loaded a skill went well or wrong (``succeeded``,
``failed``), and the skills a session's last turn loaded, waiting for the user's next message
to say how it went (``skill_outcome_pending``)."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE skill_quarantine (
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            source TEXT NOT NULL,
            path TEXT NOT NULL,
            files TEXT NOT NULL,
            findings TEXT NOT NULL,
            warnings TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, name)
        );

        ALTER TABLE skill_usage ADD COLUMN succeeded INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE skill_usage ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE skill_usage ADD COLUMN last_succeeded_at REAL;
        ALTER TABLE skill_usage ADD COLUMN last_failed_at REAL;

        CREATE TABLE skill_outcome_pending (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            skills TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, session_id)
        );
        """
    )
