"""Users, accounts, sessions, messages, inbox, leases, usage, deliveries."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE users (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL DEFAULT 'person',
            display_name TEXT,
            timezone TEXT,
            model TEXT,
            is_owner INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL
        );
        CREATE TABLE accounts (
            account TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id),
            platform TEXT NOT NULL,
            display_name TEXT,
            created_at REAL NOT NULL
        );
        CREATE INDEX accounts_user ON accounts(user_id);

        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id),
            chat_key TEXT NOT NULL,
            platform TEXT NOT NULL,
            title TEXT,
            model TEXT,
            system_prompt TEXT,
            started_at REAL NOT NULL,
            last_active_at REAL NOT NULL,
            ended_at REAL,
            end_reason TEXT
        );
        CREATE INDEX sessions_chat ON sessions(user_id, chat_key, last_active_at);

        CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            tool_calls TEXT,
            tool_call_id TEXT,
            name TEXT,
            author TEXT,
            inbox_id INTEGER,
            external_id TEXT,
            compacted INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL
        );
        CREATE INDEX messages_session ON messages(user_id, session_id, id);

        CREATE TABLE inbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL,
            chat_key TEXT NOT NULL,
            platform TEXT NOT NULL,
            platform_message_id TEXT NOT NULL,
            account TEXT NOT NULL,
            payload TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            session_id TEXT,
            reply TEXT,
            error TEXT,
            received_at REAL NOT NULL,
            started_at REAL,
            done_at REAL,
            UNIQUE (platform, platform_message_id)
        );
        CREATE INDEX inbox_chat ON inbox(user_id, chat_key, status, id);
        CREATE INDEX inbox_status ON inbox(status, received_at);

        CREATE TABLE leases (
            name TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            owner TEXT NOT NULL,
            expires_at REAL NOT NULL
        );

        CREATE TABLE usage (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL,
            session_id TEXT,
            inbox_id INTEGER,
            model TEXT NOT NULL,
            calls INTEGER NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL,
            created_at REAL NOT NULL
        );
        CREATE INDEX usage_user ON usage(user_id, created_at);

        CREATE TABLE deliveries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL,
            source TEXT NOT NULL UNIQUE,
            platform TEXT NOT NULL,
            chat_key TEXT NOT NULL,
            target TEXT NOT NULL,
            text TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at REAL NOT NULL,
            claimed_by TEXT,
            claimed_until REAL,
            last_error TEXT,
            platform_ids TEXT,
            created_at REAL NOT NULL,
            sent_at REAL
        );
        CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
        CREATE INDEX deliveries_user ON deliveries(user_id, chat_key, id);
        """
    )
