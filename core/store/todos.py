"""Each session's task list, as the ``todo`` tool last wrote it (rows; rules in the tool)."""

from __future__ import annotations

import json
from typing import Any

from core.store.db import Database


class SessionTodos:
    def __init__(self, db: Database):
        self.db = db

    def get(self, user_id: str, session_id: str) -> list[dict[str, Any]]:
        raw = self.db.scalar(
            "SELECT items FROM session_todos WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        )
        items = json.loads(raw) if raw else []
        return items if isinstance(items, list) else []

    def put(self, user_id: str, session_id: str, items: list[dict[str, Any]]) -> None:
        self.db.execute(
            "INSERT INTO session_todos (user_id, session_id, items, updated_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (user_id, session_id) DO UPDATE SET"
            " items = excluded.items, updated_at = excluded.updated_at",
            (user_id, session_id, json.dumps(items), self.db.clock.now()),
        )
