"""Full-text search over messages, session external ids, compaction summaries and state.

Two contentless FTS5 tables index every message (text, tool calls, tool results): one with the
porter tokenizer for words, one with the trigram tokenizer for substrings, identifiers and CJK.
Both carry the owning user in a ``scope`` column that every query constrains; triggers keep them
in step with ``messages`` on insert, delete and update (content, tool calls, compaction).
"""

from __future__ import annotations

from core.store.db import Database


def body_sql(r: str) -> str:
    """The text indexed for a message row (``r``: NEW or OLD in a trigger, or a table alias)."""
    return (
        f"{r}.content || CASE WHEN {r}.role = 'tool' AND {r}.name IS NOT NULL"
        f" THEN ' ' || {r}.name ELSE '' END"
        f" || CASE WHEN {r}.tool_calls IS NULL THEN ''"
        f" WHEN json_valid({r}.tool_calls) THEN ' ' || coalesce((SELECT group_concat("
        f"coalesce(json_extract(value, '$.function.name'), '') || ' ' ||"
        f" coalesce(json_extract(value, '$.function.arguments'), ''), ' ')"
        f" FROM json_each({r}.tool_calls)), '')"
        f" ELSE ' ' || {r}.tool_calls END"
    )


FTS_TABLES = {
    "messages_fts": "porter unicode61 remove_diacritics 2",
    "messages_fts_tri": "trigram remove_diacritics 1",
}


def create_triggers(db: Database) -> None:
    """Keep both FTS tables in sync with ``messages`` (also used after a bulk rebuild)."""
    inserts = " ".join(
        f"INSERT INTO {t} (rowid, scope, body) VALUES (new.id, new.user_id, {body_sql('new')});"
        for t in FTS_TABLES
    )
    deletes = " ".join(f"DELETE FROM {t} WHERE rowid = old.id;" for t in FTS_TABLES)
    db.executescript(
        f"""
        CREATE TRIGGER IF NOT EXISTS messages_search_ai AFTER INSERT ON messages BEGIN
            {inserts}
        END;
        CREATE TRIGGER IF NOT EXISTS messages_search_ad AFTER DELETE ON messages BEGIN
            {deletes}
        END;
        CREATE TRIGGER IF NOT EXISTS messages_search_au
        AFTER UPDATE OF content, tool_calls, role, name, user_id, compacted ON messages BEGIN
            {deletes}
            {inserts}
        END;
        """
    )


def drop_triggers(db: Database) -> None:
    for name in ("messages_search_ai", "messages_search_ad", "messages_search_au"):
        db.execute(f"DROP TRIGGER IF EXISTS {name}")


def rebuild(db: Database) -> None:
    """Re-index every message from scratch (bulk loads, repairs)."""
    for table in FTS_TABLES:
        db.execute(f"DELETE FROM {table}")
        db.execute(
            f"INSERT INTO {table} (rowid, scope, body)"
            f" SELECT m.id, m.user_id, {body_sql('m')} FROM messages m"
        )


def migrate(db: Database) -> None:
    for table, tokenizer in FTS_TABLES.items():
        db.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5(scope, body, tokenize='{tokenizer}',"
            " content='', contentless_delete=1)"
        )
    create_triggers(db)
    rebuild(db)
    db.executescript(
        """
        ALTER TABLE sessions ADD COLUMN external_id TEXT;
        CREATE INDEX sessions_external ON sessions(user_id, external_id);
        CREATE INDEX sessions_user_active ON sessions(user_id, last_active_at);
        CREATE INDEX messages_external ON messages(user_id, session_id, external_id);

        CREATE TABLE session_summaries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            content TEXT NOT NULL,
            first_message_id INTEGER NOT NULL,
            last_message_id INTEGER NOT NULL,
            compacted_count INTEGER NOT NULL,
            model TEXT,
            created_at REAL NOT NULL
        );
        CREATE INDEX session_summaries_session ON session_summaries(user_id, session_id, id);

        CREATE TABLE compression_state (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            failures INTEGER NOT NULL DEFAULT 0,
            retry_at REAL,
            last_error TEXT,
            updated_at REAL NOT NULL,
            PRIMARY KEY (user_id, session_id)
        );
        """
    )
