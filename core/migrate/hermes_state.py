"""Hermes Agent's session database (``state.db``), read only.

Opened with SQLite's ``mode=ro`` URI, so it is safe while Hermes runs (WAL: readers see the last
committed state and never block the gateway). Its layout has grown by columns over the versions
recorded in ``schema_version`` (v1 … v30 as published: ``source``/``user_id``/``parent_session_id``
early, titles and billing later, ``chat_id``/``chat_type``/``thread_id`` and the messages'
``active``/``compacted`` flags in the newest): every column is read if present and taken as
missing otherwise. A database from a newer version than ``KNOWN_VERSION`` is refused rather than
guessed at."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from core.errors import IrisUsageError

KNOWN_VERSION = 30  # the newest state.db layout this reader was checked against
BATCH = 2_000

SESSION_COLUMNS = (
    "id", "source", "user_id", "session_key", "chat_id", "chat_type", "thread_id",
    "display_name", "model", "parent_session_id", "started_at", "ended_at", "end_reason",
    "message_count", "tool_call_count", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "reasoning_tokens", "billing_provider", "estimated_cost_usd",
    "actual_cost_usd", "title", "api_call_count", "last_activity_at",
)
MESSAGE_COLUMNS = (
    "id", "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
    "timestamp", "active", "compacted",
)
REQUIRED = {"sessions": {"id", "source", "started_at"},
            "messages": {"id", "session_id", "role", "timestamp"}}


class HermesStateError(IrisUsageError):
    """state.db cannot be read as Hermes' session database; nothing was imported from it."""


@dataclass(frozen=True)
class HermesSession:
    id: str
    source: str
    user_id: str | None
    session_key: str | None
    chat_id: str | None
    chat_type: str | None
    thread_id: str | None
    display_name: str | None
    model: str | None
    parent_session_id: str | None
    started_at: float
    ended_at: float | None
    end_reason: str | None
    title: str | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost_usd: float | None
    api_calls: int
    last_activity_at: float | None


@dataclass(frozen=True)
class HermesMessage:
    id: int
    session_id: str
    role: str
    content: str | None
    tool_call_id: str | None
    tool_calls: str | None
    tool_name: str | None
    timestamp: float
    active: bool
    compacted: bool


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


class StateDB:
    """A read-only view of one ``state.db``."""

    def __init__(self, path: Path):
        self.path = path
        if not path.is_file():
            raise HermesStateError(f"{path}: no such file")
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        try:
            self.conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self.conn.execute("PRAGMA query_only = 1")
            tables = {r[0] for r in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        except sqlite3.DatabaseError as exc:
            raise HermesStateError(f"{path}: not a readable SQLite database ({exc})") from None
        self.columns: dict[str, set[str]] = {}
        for table, needed in REQUIRED.items():
            if table not in tables:
                self.close()
                raise HermesStateError(f"{path}: no {table} table; this is not Hermes' state.db")
            self.columns[table] = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
            missing = needed - self.columns[table]
            if missing:
                self.close()
                raise HermesStateError(f"{path}: {table} lacks {', '.join(sorted(missing))}; "
                                       "this is not Hermes' state.db")
        self.version = self._version(tables)
        if self.version > KNOWN_VERSION:
            self.close()
            raise HermesStateError(
                f"{path} is Hermes state.db schema version {self.version}; this Iris reads "
                f"versions up to {KNOWN_VERSION}. Nothing was imported: update Iris, or export "
                "the sessions from Hermes as JSONL and use `iris sessions import`."
            )

    def _version(self, tables: set[str]) -> int:
        if "schema_version" not in tables:
            return 0
        row = self.conn.execute("SELECT max(version) FROM schema_version").fetchone()
        return _int(row[0] if row else 0)

    def _select(self, table: str, wanted: tuple[str, ...]) -> str:
        have = self.columns[table]
        return ", ".join(c if c in have else f"NULL AS {c}" for c in wanted)

    def close(self) -> None:
        self.conn.close()

    def sessions(self) -> list[HermesSession]:
        """Every session, oldest first (parents before the sessions compressed out of them)."""
        rows = self.conn.execute(
            f"SELECT {self._select('sessions', SESSION_COLUMNS)} FROM sessions"
            " ORDER BY started_at, id").fetchall()
        out = []
        for r in rows:
            d = dict(zip(SESSION_COLUMNS, r, strict=True))
            cost = _float(d["actual_cost_usd"])
            out.append(HermesSession(
                id=str(d["id"]), source=str(d["source"] or "unknown").lower(),
                user_id=_text(d["user_id"]), session_key=_text(d["session_key"]),
                chat_id=_text(d["chat_id"]), chat_type=_text(d["chat_type"]),
                thread_id=_text(d["thread_id"]), display_name=_text(d["display_name"]),
                model=_text(d["model"]), parent_session_id=_text(d["parent_session_id"]),
                started_at=_float(d["started_at"]) or 0.0, ended_at=_float(d["ended_at"]),
                end_reason=_text(d["end_reason"]), title=_text(d["title"]),
                input_tokens=_int(d["input_tokens"]), output_tokens=_int(d["output_tokens"]),
                cache_read_tokens=_int(d["cache_read_tokens"]),
                cache_write_tokens=_int(d["cache_write_tokens"]),
                reasoning_tokens=_int(d["reasoning_tokens"]),
                cost_usd=cost if cost is not None else _float(d["estimated_cost_usd"]),
                api_calls=_int(d["api_call_count"]),
                last_activity_at=_float(d["last_activity_at"]),
            ))
        return out

    def count_messages(self) -> int:
        return _int(self.conn.execute("SELECT count(*) FROM messages").fetchone()[0])

    def messages(self, session_id: str) -> Iterator[HermesMessage]:
        """A session's messages in the order they were written, fetched in batches."""
        select = self._select("messages", MESSAGE_COLUMNS)
        last = -1
        while True:
            rows = self.conn.execute(
                f"SELECT {select} FROM messages WHERE session_id = ? AND id > ? ORDER BY id"
                " LIMIT ?", (session_id, last, BATCH)).fetchall()
            if not rows:
                return
            for r in rows:
                d = dict(zip(MESSAGE_COLUMNS, r, strict=True))
                yield HermesMessage(
                    id=int(d["id"]), session_id=str(d["session_id"]),
                    role=str(d["role"] or ""), content=d["content"] if isinstance(
                        d["content"], str) else _text(d["content"]),
                    tool_call_id=_text(d["tool_call_id"]), tool_calls=_text(d["tool_calls"]),
                    tool_name=_text(d["tool_name"]), timestamp=_float(d["timestamp"]) or 0.0,
                    active=d["active"] is None or bool(d["active"]),
                    compacted=bool(d["compacted"]),
                )
            last = int(rows[-1][0])
