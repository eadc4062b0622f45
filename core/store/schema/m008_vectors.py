"""Dense vectors of messages for semantic search: one row per chunk of a message and model,
int8-quantised (cosine is scale-free, so rows are re-normalised when read). A message with no
text to embed gets one row with an empty vector, so it is not looked at again. Triggers drop a
message's vectors when its text changes or it is deleted; they are recomputed on demand."""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE message_vectors (
            user_id TEXT NOT NULL,
            message_id INTEGER NOT NULL,
            model TEXT NOT NULL,
            chunk INTEGER NOT NULL,
            vector BLOB NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, message_id, model, chunk)
        ) WITHOUT ROWID;
        CREATE INDEX message_vectors_model ON message_vectors(user_id, model, message_id);

        CREATE TRIGGER message_vectors_ad AFTER DELETE ON messages BEGIN
            DELETE FROM message_vectors WHERE user_id = old.user_id AND message_id = old.id;
        END;
        CREATE TRIGGER message_vectors_au AFTER UPDATE OF content, tool_calls, role, name
        ON messages BEGIN
            DELETE FROM message_vectors WHERE user_id = old.user_id AND message_id = old.id;
        END;
        """
    )
