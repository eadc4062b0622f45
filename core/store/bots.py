"""Iris' own bot accounts as the platforms describe them (system rows, no user content)."""

from __future__ import annotations

import json
from typing import Any

from core.store.db import Database

SYSTEM_SCOPE = "system"


class BotIdentities:
    def __init__(self, db: Database):
        self.db = db

    def get(self, platform: str, bot_id: str) -> dict[str, Any] | None:
        row = self.db.one(
            "SELECT identity FROM bot_identities WHERE user_id = ? AND platform = ?"
            " AND bot_id = ?", (SYSTEM_SCOPE, platform, bot_id),
        )
        return json.loads(row["identity"]) if row else None

    def put(self, platform: str, bot_id: str, identity: dict[str, Any]) -> None:
        self.db.execute(
            "INSERT INTO bot_identities (user_id, platform, bot_id, identity, fetched_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (platform, bot_id) DO UPDATE SET"
            " identity = excluded.identity, fetched_at = excluded.fetched_at",
            (SYSTEM_SCOPE, platform, bot_id, json.dumps(identity, sort_keys=True),
             self.db.clock.now()),
        )
