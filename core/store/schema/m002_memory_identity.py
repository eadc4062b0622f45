"""Memory (entries, per-target versions, archive, review marks), pairing, account links."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        ALTER TABLE users ADD COLUMN merged_into TEXT;
        ALTER TABLE accounts ADD COLUMN approved_at REAL;
        ALTER TABLE accounts ADD COLUMN approved_by TEXT;
        ALTER TABLE accounts ADD COLUMN failed_attempts INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE accounts ADD COLUMN first_failed_at REAL;
        ALTER TABLE accounts ADD COLUMN locked_until REAL;

        CREATE TABLE memory_entries (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            target TEXT NOT NULL CHECK (target IN ('memory', 'user')),
            position INTEGER NOT NULL,
            content TEXT NOT NULL,
            provenance TEXT NOT NULL,
            author TEXT,
            session_id TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_used_at REAL NOT NULL
        );
        CREATE INDEX memory_entries_user ON memory_entries(user_id, target, position);

        CREATE TABLE memory_versions (
            user_id TEXT NOT NULL,
            target TEXT NOT NULL,
            version INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (user_id, target)
        );

        CREATE TABLE memory_archive (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            target TEXT NOT NULL,
            content TEXT NOT NULL,
            reason TEXT NOT NULL,
            archived_at REAL NOT NULL,
            archived_by TEXT,
            entry_id TEXT,
            provenance TEXT,
            created_at REAL,
            restored_at REAL,
            restored_as TEXT
        );
        CREATE INDEX memory_archive_user ON memory_archive(user_id, archived_at);

        CREATE TABLE memory_reviews (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            reviewed_message_id INTEGER NOT NULL DEFAULT 0,
            reviews INTEGER NOT NULL DEFAULT 0,
            reviewed_at REAL,
            PRIMARY KEY (user_id, session_id)
        );

        CREATE TABLE pairing_requests (
            code TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            account TEXT NOT NULL,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            thread_id TEXT,
            meta TEXT,
            display_name TEXT,
            status TEXT NOT NULL DEFAULT 'pending',
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            decided_at REAL,
            decided_by TEXT
        );
        CREATE INDEX pairing_pending ON pairing_requests(platform, status, expires_at);
        CREATE INDEX pairing_account ON pairing_requests(account, status);

        CREATE TABLE link_codes (
            code TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            account TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            redeemed_by_user TEXT,
            redeemed_by_account TEXT,
            redeemed_at REAL,
            merged_at REAL,
            merge_report TEXT
        );
        CREATE INDEX link_codes_user ON link_codes(user_id, status);
        CREATE INDEX link_codes_redeemer ON link_codes(redeemed_by_user, status);
        """
    )
