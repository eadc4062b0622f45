"""Stored skill vectors (``skill_vectors``, m009): opaque blobs per user, skill, version and
model. Encoding and scoring live in ``core.skills.semantic``; this module only moves bytes.
Every query is confined to one scope: a user id, or ``SYSTEM_SCOPE`` for bundled skills."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.store.db import Database, Row

SYSTEM_SCOPE = "system:bundled"


@dataclass(frozen=True)
class StoredVectors:
    name: str
    version: int
    digest: str
    blobs: tuple[bytes, ...]


class SkillVectors:
    def __init__(self, db: Database):
        self.db = db

    def put(self, user_id: str, model: str, name: str, version: int, digest: str,
            blobs: Sequence[bytes], *, at: float | None = None) -> None:
        """Make ``blobs`` the vectors of ``name`` at ``version``; the skill's vectors for other
        versions of ``model`` are dropped."""
        if not user_id:
            raise ValueError("skill vectors need an owner")
        if not blobs:
            raise ValueError("no vectors to store")
        at = self.db.clock.now() if at is None else at
        with self.db.transaction():
            self.db.execute(
                "DELETE FROM skill_vectors WHERE user_id = ? AND model = ? AND name = ?",
                (user_id, model, name),
            )
            for chunk, blob in enumerate(blobs):
                self.db.execute(
                    "INSERT INTO skill_vectors (user_id, name, version, model, chunk, digest,"
                    " vector, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (user_id, name, version, model, chunk, digest, bytes(blob), at),
                )

    def load(self, user_id: str, model: str) -> dict[str, StoredVectors]:
        """The scope's vectors for ``model``, by skill name."""
        rows = self.db.query(
            "SELECT name, version, digest, vector FROM skill_vectors WHERE user_id = ?"
            " AND model = ? ORDER BY name, chunk", (user_id, model),
        )
        grouped: dict[str, list[Row]] = {}
        for row in rows:
            grouped.setdefault(row["name"], []).append(row)
        return {
            name: StoredVectors(name, found[0]["version"], found[0]["digest"],
                                tuple(r["vector"] for r in found))
            for name, found in grouped.items()
        }

    def delete(self, user_id: str, name: str | None = None) -> int:
        """Drop the scope's vectors (of one skill); they are recomputed on demand."""
        sql, params = "DELETE FROM skill_vectors WHERE user_id = ?", [user_id]
        if name is not None:
            sql += " AND name = ?"
            params.append(name)
        return self.db.execute(sql, tuple(params))
