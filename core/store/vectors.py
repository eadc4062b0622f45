"""Stored message vectors (``message_vectors``, m008): opaque int8 blobs per message chunk and
model. Quantising and scoring live in ``core.search.embed``; this module only moves bytes, so
the store stays free of numpy. Every query is confined to one user."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.store.db import Database, Statement
from core.store.search import Filters
from core.store.sessions import StoredMessage


@dataclass(frozen=True)
class VectorRows:
    message_ids: list[int]
    blobs: list[bytes]


class Vectors:
    def __init__(self, db: Database):
        self.db = db

    def put(
        self, user_id: str, model: str, vectors: Mapping[int, Sequence[bytes]],
        *, at: float | None = None,
    ) -> int:
        """Replace the vectors of each message (``message id → one blob per chunk``; an empty
        sequence marks a message with nothing to embed). Messages that are not the user's are
        skipped. Returns the number of messages written."""
        if not vectors:
            return 0
        at = self.db.clock.now() if at is None else at
        ids = list(vectors)
        marks = ",".join("?" * len(ids))
        writes: list[Statement] = []
        for message_id in ids:  # one transaction, one request; the user's messages only
            writes.append(("DELETE FROM message_vectors WHERE user_id = ? AND message_id = ?"
                           " AND model = ?", (user_id, message_id, model)))
            for chunk, blob in enumerate(list(vectors[message_id]) or [b""]):
                writes.append((
                    "INSERT INTO message_vectors (user_id, message_id, model, chunk, vector,"
                    " created_at) SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM messages"
                    " WHERE user_id = ? AND id = ?)",
                    (user_id, message_id, model, chunk, bytes(blob), at, user_id, message_id),
                ))
        _, [owned] = self.db.write_then_read(writes, [(
            f"SELECT count(*) AS n FROM messages WHERE user_id = ? AND id IN ({marks})",
            (user_id, *ids),
        )])
        return int(owned[0]["n"])

    def rows(self, user_id: str, model: str, filters: Filters | None = None) -> VectorRows:
        """Every non-empty vector of the user's messages for ``model`` (matching ``filters``)."""
        extra, params = (filters or Filters()).sql()
        if extra:
            sql = (
                "SELECT v.message_id, v.vector FROM message_vectors v JOIN messages m"
                " ON m.id = v.message_id AND m.user_id = v.user_id WHERE v.user_id = ?"
                f" AND v.model = ? AND length(v.vector) > 0{extra}"
            )
        else:
            sql = (
                "SELECT message_id, vector FROM message_vectors WHERE user_id = ? AND model = ?"
                " AND length(vector) > 0"
            )
        found = self.db.query(sql, (user_id, model, *params))
        return VectorRows([r["message_id"] for r in found], [r["vector"] for r in found])

    def missing(
        self, user_id: str, model: str | None, *, limit: int, session_id: str | None = None,
    ) -> list[StoredMessage]:
        """The user's newest messages with no vectors for ``model`` (None: for any model)."""
        extra, params = Filters(session_id=session_id).sql()
        which, more = ("", []) if model is None else (" AND v.model = ?", [model])
        rows = self.db.query(
            f"SELECT m.* FROM messages m WHERE m.user_id = ?{extra} AND NOT EXISTS ("
            "SELECT 1 FROM message_vectors v WHERE v.user_id = m.user_id"
            f" AND v.message_id = m.id{which}) ORDER BY m.id DESC LIMIT ?",
            (user_id, *params, *more, limit),
        )
        return [StoredMessage.from_row(row) for row in rows]

    def count_missing(self, user_id: str, model: str | None) -> int:
        which, more = ("", []) if model is None else (" AND v.model = ?", [model])
        return self.db.scalar(
            "SELECT count(*) FROM messages m WHERE m.user_id = ? AND NOT EXISTS ("
            "SELECT 1 FROM message_vectors v WHERE v.user_id = m.user_id"
            f" AND v.message_id = m.id{which})",
            (user_id, *more),
        ) or 0

    def counts(self, user_id: str) -> dict[str, int]:
        """Messages with vectors, per model."""
        rows = self.db.query(
            "SELECT model, count(DISTINCT message_id) AS n FROM message_vectors WHERE user_id = ?"
            " GROUP BY model", (user_id,),
        )
        return {row["model"]: row["n"] for row in rows}

    def delete(self, user_id: str, model: str | None = None) -> int:
        """Drop the user's vectors (of one model, or all); they are derived data, rebuilt by
        ``iris sessions reindex`` or lazily by searches."""
        if model is None:
            return self.db.execute("DELETE FROM message_vectors WHERE user_id = ?", (user_id,))
        return self.db.execute(
            "DELETE FROM message_vectors WHERE user_id = ? AND model = ?", (user_id, model)
        )
