"""Dense vectors of skills for semantic routing: one row per vector (a skill has a few: its
whole name and description, then each sentence), per user, skill, version and model. The digest
names the exact text embedded, so a changed recipe or a restored database never serves a vector
of other text. Bundled skills' vectors are stored under the scope ``system:bundled``; a user's
own skills (copies of bundled ones included) only ever under that user's id."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE skill_vectors (
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            model TEXT NOT NULL,
            chunk INTEGER NOT NULL,
            digest TEXT NOT NULL,
            vector BLOB NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, model, name, version, chunk)
        ) WITHOUT ROWID;
        """
    )
