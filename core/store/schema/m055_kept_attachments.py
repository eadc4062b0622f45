"""Email attachments the inbound webhook keeps in the object store, with when they were kept,
so the sweep can delete them after ``email_attachment_days``. Attachments kept before this
migration are adopted from the inbox entries that point at them (kept at their arrival)."""

from __future__ import annotations

import json

from core.store.db import Database

_PREFIX = "inbound/email/"


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE kept_attachments (
            user_id TEXT NOT NULL,
            object_key TEXT NOT NULL,
            kept_at REAL NOT NULL,
            PRIMARY KEY (user_id, object_key)
        );
        CREATE INDEX kept_attachments_due ON kept_attachments(kept_at, user_id);
        """
    )
    rows = db.query(
        "SELECT user_id, payload, received_at FROM inbox WHERE platform = 'email'"
        " AND payload LIKE '%inbound/email/%'"
    )
    for row in rows:
        for key in _kept_keys(row["user_id"], row["payload"]):
            db.execute(
                "INSERT OR IGNORE INTO kept_attachments (user_id, object_key, kept_at)"
                " VALUES (?, ?, ?)",
                (row["user_id"], key, row["received_at"]),
            )


def _kept_keys(user_id: str, payload: str) -> list[str]:
    try:
        attachments = json.loads(payload).get("attachments") or []
    except (ValueError, AttributeError):
        return []
    keys = []
    for attachment in attachments:
        ref = attachment.get("ref") if isinstance(attachment, dict) else None
        owner, _, key = str(ref or "").partition("/")
        if owner == user_id and key.startswith(_PREFIX):
            keys.append(key)
    return keys
