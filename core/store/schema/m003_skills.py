"""Skills: each user's library index, its version history and per-skill usage counters.

The skill files themselves live in the object store (``skills/<name>/versions/NNNNNN.json``
manifests naming content-addressed blobs); these tables index them. ``skill_usage`` also
counts bundled skills, which have no row in ``skills``.
"""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE skills (
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            category TEXT,
            origin TEXT NOT NULL,
            provenance TEXT NOT NULL,
            version INTEGER NOT NULL,
            files TEXT NOT NULL DEFAULT '[]',
            search_text TEXT NOT NULL DEFAULT '',
            source TEXT,
            status TEXT NOT NULL DEFAULT 'active',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            stale_at REAL,
            archived_at REAL,
            PRIMARY KEY (user_id, name)
        );
        CREATE INDEX skills_status ON skills(user_id, status);

        CREATE TABLE skill_versions (
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            provenance TEXT NOT NULL,
            action TEXT NOT NULL,
            note TEXT,
            archived INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, name, version)
        );

        CREATE TABLE skill_usage (
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            shown INTEGER NOT NULL DEFAULT 0,
            used INTEGER NOT NULL DEFAULT 0,
            patched INTEGER NOT NULL DEFAULT 0,
            last_shown_at REAL,
            last_used_at REAL,
            last_patched_at REAL,
            PRIMARY KEY (user_id, name)
        );
        """
    )
