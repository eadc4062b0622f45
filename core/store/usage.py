"""Token and cost accounting per user, session, turn, model and kind of call (chat, vision,
speech, transcription)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.messages import Usage
from core.store.db import Database, Statement


@dataclass(frozen=True)
class UsageTotals:
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageLog:
    def __init__(self, db: Database):
        self.db = db

    def record(
        self, user_id: str, usage: Usage, *, session_id: str | None, inbox_id: int | None
    ) -> None:
        self.db.execute(*self.record_statement(user_id, usage, session_id=session_id,
                                               inbox_id=inbox_id))

    def record_statement(
        self, user_id: str, usage: Usage, *, session_id: str | None, inbox_id: int | None
    ) -> Statement:
        return (
            "INSERT INTO usage (user_id, session_id, inbox_id, model, calls, prompt_tokens,"
            " completion_tokens, cache_read_tokens, cache_write_tokens, cost_usd, kind,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                user_id, session_id, inbox_id, usage.model, usage.calls, usage.prompt_tokens,
                usage.completion_tokens, usage.cache_read_tokens, usage.cache_write_tokens,
                usage.cost_usd, usage.kind, self.db.clock.now(),
            ),
        )

    def totals(
        self, user_id: str, *, session_id: str | None = None, since: float | None = None
    ) -> UsageTotals:
        sql = (
            "SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(prompt_tokens), 0) AS p,"
            " coalesce(sum(completion_tokens), 0) AS c, coalesce(sum(cache_read_tokens), 0) AS cr,"
            " coalesce(sum(cache_write_tokens), 0) AS cw, sum(cost_usd) AS cost"
            " FROM usage WHERE user_id = ?"
        )
        params: list[object] = [user_id]
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        if since is not None:
            sql += " AND created_at >= ?"
            params.append(since)
        row = self.db.one(sql, params)
        assert row is not None
        return UsageTotals(row["calls"], row["p"], row["c"], row["cr"], row["cw"], row["cost"])

    def by_model(self, user_id: str) -> dict[str, UsageTotals]:
        return self._grouped(user_id, "model")

    def by_kind(self, user_id: str, *, session_id: str | None = None) -> dict[str, UsageTotals]:
        """Totals per kind of call, the user's (or one session's), by kind name."""
        return self._grouped(user_id, "kind", session_id=session_id)

    def _grouped(
        self, user_id: str, column: Literal["model", "kind"], *, session_id: str | None = None
    ) -> dict[str, UsageTotals]:
        sql = (
            f"SELECT {column} AS key, sum(calls) AS calls, sum(prompt_tokens) AS p,"
            " sum(completion_tokens) AS c, sum(cache_read_tokens) AS cr,"
            " sum(cache_write_tokens) AS cw, sum(cost_usd) AS cost"
            " FROM usage WHERE user_id = ?"
        )
        params: list[object] = [user_id]
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        rows = self.db.query(sql + f" GROUP BY {column} ORDER BY {column}", params)
        return {
            r["key"]: UsageTotals(r["calls"], r["p"], r["c"], r["cr"], r["cw"], r["cost"])
            for r in rows
        }

    def daily(self, user_id: str, *, since: float) -> list[tuple[str, str, UsageTotals]]:
        """(UTC day, model, totals) from ``since`` on, oldest first."""
        rows = self.db.query(
            "SELECT date(created_at, 'unixepoch') AS day, model, sum(calls) AS calls,"
            " sum(prompt_tokens) AS p, sum(completion_tokens) AS c,"
            " sum(cache_read_tokens) AS cr, sum(cache_write_tokens) AS cw, sum(cost_usd) AS cost"
            " FROM usage WHERE user_id = ? AND created_at >= ? GROUP BY day, model"
            " ORDER BY day, model",
            (user_id, since),
        )
        return [
            (r["day"], r["model"],
             UsageTotals(r["calls"], r["p"], r["c"], r["cr"], r["cw"], r["cost"]))
            for r in rows
        ]

    def for_inbox(self, user_id: str, inbox_id: int) -> list[Usage]:
        rows = self.db.query(
            "SELECT * FROM usage WHERE user_id = ? AND inbox_id = ? ORDER BY id",
            (user_id, inbox_id),
        )
        return [
            Usage(
                model=r["model"], prompt_tokens=r["prompt_tokens"],
                completion_tokens=r["completion_tokens"], cache_read_tokens=r["cache_read_tokens"],
                cache_write_tokens=r["cache_write_tokens"], cost_usd=r["cost_usd"],
                calls=r["calls"], kind=r["kind"],
            )
            for r in rows
        ]
