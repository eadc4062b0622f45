"""Event webhooks: signed inbound endpoints a user creates (for GitHub, a monitoring system…).

A POST to ``/hooks/<id>`` starts a turn with the job's prompt and the payload as untrusted data,
delivered like a cron run. The id is the URL's unguessable part; the secret signs deliveries.
Exactly once per delivery: the run's inbox entry is unique per (hook, delivery id).
"""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE event_hooks (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            prompt TEXT NOT NULL,
            target TEXT NOT NULL,
            secret TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            removed_at REAL
        );
        CREATE INDEX event_hooks_user ON event_hooks(user_id, created_at);
        CREATE UNIQUE INDEX event_hooks_name ON event_hooks(user_id, name)
            WHERE removed_at IS NULL;
        """
    )
