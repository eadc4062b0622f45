"""Each user's webhook: where their scheduled results are pushed, and the secret that signs them."""

from __future__ import annotations

from dataclasses import dataclass

from core.store.db import Database


@dataclass(frozen=True)
class UserWebhook:
    user_id: str
    url: str
    secret: str
    created_at: float


class UserWebhooks:
    def __init__(self, db: Database):
        self.db = db

    def set(self, user_id: str, url: str, secret: str) -> UserWebhook:
        at = self.db.clock.now()
        self.db.execute(
            "INSERT INTO user_webhooks (user_id, url, secret, created_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (user_id) DO UPDATE SET url = excluded.url, secret = excluded.secret,"
            " created_at = excluded.created_at",
            (user_id, url, secret, at),
        )
        return UserWebhook(user_id, url, secret, at)

    def get(self, user_id: str) -> UserWebhook | None:
        row = self.db.one("SELECT * FROM user_webhooks WHERE user_id = ?", (user_id,))
        if row is None:
            return None
        return UserWebhook(row["user_id"], row["url"], row["secret"], row["created_at"])

    def remove(self, user_id: str) -> bool:
        return self.db.execute("DELETE FROM user_webhooks WHERE user_id = ?", (user_id,)) == 1
