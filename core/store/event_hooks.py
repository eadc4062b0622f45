"""Event webhooks' rows: a user's signed inbound endpoints (``/hooks/<id>``).

Every method takes the owning user, except ``lookup``: an inbound POST knows only the URL's
id, which is unguessable (``core.ids.new_id``: 40 random bits after a time prefix, plus a
second random part here), and the row it finds names the only user the turn may run as.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from core.errors import IrisUsageError, NotFound
from core.ids import new_id
from core.store.db import Database

HOOK_PREFIX = "hook"


@dataclass(frozen=True)
class EventHook:
    id: str
    user_id: str
    name: str
    prompt: str
    target: dict[str, Any]  # ``core.scheduler.targets.Target.to_dict()``
    secret: str
    created_at: float

    @property
    def chat_key(self) -> str:
        return f"cron:{self.id}"

    def public(self) -> dict[str, Any]:
        """What ``list``/``show`` print: everything but the secret."""
        return {
            "id": self.id,
            "user_id": self.user_id,
            "name": self.name,
            "prompt": self.prompt,
            "deliver": self.target.get("label"),
            "path": f"/hooks/{self.id}",
            "created_at": self.created_at,
        }


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def _hook(row: dict[str, Any]) -> EventHook:
    return EventHook(
        row["id"],
        row["user_id"],
        row["name"],
        row["prompt"],
        json.loads(row["target"]),
        row["secret"],
        row["created_at"],
    )


class EventHooks:
    def __init__(self, db: Database):
        self.db = db

    def create(self, user_id: str, name: str, prompt: str, target: dict[str, Any]) -> EventHook:
        name, prompt = name.strip(), prompt.strip()
        if not name or len(name) > 80:
            raise IrisUsageError("a webhook needs a name of 1 to 80 characters")
        if not prompt:
            raise IrisUsageError("a webhook needs a prompt (--prompt): what to do with each event")
        if self.find(user_id, name) is not None:
            raise IrisUsageError(f"you already have a webhook named {name!r}")
        hook_id = f"{new_id(HOOK_PREFIX)}{secrets.token_hex(8)}"
        at = self.db.clock.now()
        self.db.execute(
            "INSERT INTO event_hooks (id, user_id, name, prompt, target, secret, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                hook_id,
                user_id,
                name,
                prompt,
                json.dumps(target, sort_keys=True),
                new_secret(),
                at,
                at,
            ),
        )
        return self.get(user_id, hook_id)

    def list(self, user_id: str) -> list[EventHook]:
        rows = self.db.query(
            "SELECT * FROM event_hooks WHERE user_id = ? AND removed_at IS NULL"
            " ORDER BY created_at, id",
            (user_id,),
        )
        return [_hook(r) for r in rows]

    def find(self, user_id: str, ref: str) -> EventHook | None:
        """The user's live hook with id or name ``ref``."""
        row = self.db.one(
            "SELECT * FROM event_hooks WHERE user_id = ? AND removed_at IS NULL"
            " AND (id = ? OR name = ?)",
            (user_id, ref, ref),
        )
        return _hook(row) if row is not None else None

    def get(self, user_id: str, ref: str) -> EventHook:
        found = self.find(user_id, ref)
        if found is None:
            raise NotFound(f"no webhook {ref!r}")
        return found

    def owner_of(self, hook_id: str) -> str | None:
        """The owner of a live hook, for the operator's CLI naming a hook by id alone."""
        hook = self.lookup(hook_id)
        return hook.user_id if hook is not None else None

    def lookup(self, hook_id: str) -> EventHook | None:
        """The live hook behind ``/hooks/<hook_id>`` (see the module's docstring)."""
        if not hook_id.startswith(f"{HOOK_PREFIX}_") or len(hook_id) > 80:
            return None
        row = self.db.one(
            "SELECT * FROM event_hooks WHERE id = ? AND removed_at IS NULL", (hook_id,)
        )
        return _hook(row) if row is not None else None

    def rotate_secret(self, user_id: str, ref: str) -> EventHook:
        hook = self.get(user_id, ref)
        self.db.execute(
            "UPDATE event_hooks SET secret = ?, updated_at = ? WHERE user_id = ? AND id = ?",
            (new_secret(), self.db.clock.now(), user_id, hook.id),
        )
        return self.get(user_id, hook.id)

    def remove(self, user_id: str, ref: str) -> EventHook:
        hook = self.get(user_id, ref)
        self.db.execute(
            "UPDATE event_hooks SET removed_at = ?, updated_at = ? WHERE user_id = ? AND id = ?",
            (self.db.clock.now(), self.db.clock.now(), user_id, hook.id),
        )
        return hook

    def recent_runs(self, user_id: str, hook_id: str | None, since: float) -> int:
        """Runs started since ``since`` by one hook, or (None) by all the user's hooks: what the
        rate limit counts. The inbox index (user_id, chat_key, …) serves both."""
        if hook_id is not None:
            return int(
                self.db.scalar(
                    "SELECT count(*) FROM inbox WHERE user_id = ? AND chat_key = ?"
                    " AND received_at >= ?",
                    (user_id, f"cron:{hook_id}", since),
                )
                or 0
            )
        return int(
            self.db.scalar(
                "SELECT count(*) FROM inbox WHERE user_id = ? AND chat_key >= ? AND chat_key < ?"
                " AND received_at >= ?",
                (user_id, f"cron:{HOOK_PREFIX}_", f"cron:{HOOK_PREFIX}`", since),
            )
            or 0
        )
