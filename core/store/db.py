"""The database: libSQL (a local file, or a Turso/libSQL server), one connection per process.

libsql keeps the GIL while it waits on a locked database, so two connections in one process
that contend for the write lock stall each other until the busy timeout. All access in a process
therefore goes through one connection guarded by a re-entrant lock; separate processes
coordinate through SQLite's own locking (WAL + busy timeout).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.clock import SYSTEM_CLOCK, Clock
from core.private import private_file

Row = dict[str, Any]
Params = Sequence[Any] | dict[str, Any]


class DatabaseError(Exception):
    """A database operation failed; the message says which and why."""


def _file_path(url: str) -> str:
    path = url.removeprefix("file:")
    if path.startswith("//"):
        path = path[2:]
    return path


class Database:
    def __init__(
        self, url: str, auth_token: str | None = None, *, busy_timeout: float = 15.0,
        clock: Clock = SYSTEM_CLOCK,
    ):
        import libsql

        self.url = url
        self.clock = clock  # the time every repository stamps and compares with
        self._lock = threading.RLock()
        self._depth = 0
        try:
            if url.startswith("file:"):
                path = _file_path(url)
                if path != ":memory:":  # 0600 in a 0700 directory: SQLite gives -wal the same
                    private_file(Path(path))
                self._conn = libsql.connect(path, isolation_level=None, timeout=busy_timeout)
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
                self._conn.execute("PRAGMA synchronous=NORMAL")
            else:
                self._conn = libsql.connect(url, isolation_level=None, auth_token=auth_token or "")
        except Exception as exc:  # libsql raises plain ValueError/RuntimeError
            raise DatabaseError(f"cannot open database {url}: {exc}") from exc
        self._conn.execute("PRAGMA foreign_keys=ON")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _run(self, sql: str, params: Params) -> Any:
        try:
            return self._conn.execute(sql, params)
        except ValueError as exc:
            raise DatabaseError(f"{exc} [{sql.split(None, 1)[0]}]") from exc

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; returns the number of rows changed (or the last insert id for an
        INSERT ... RETURNING-less insert is not returned: use ``one`` with RETURNING)."""
        with self._lock:
            cursor = self._run(sql, params)
            return cursor.rowcount

    def executescript(self, sql: str) -> None:
        with self._lock:
            self._conn.executescript(sql)

    def query(self, sql: str, params: Params = ()) -> list[Row]:
        with self._lock:
            cursor = self._run(sql, params)
            rows = cursor.fetchall()
            if not rows:
                return []
            names = [col[0] for col in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in rows]

    def one(self, sql: str, params: Params = ()) -> Row | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def scalar(self, sql: str, params: Params = ()) -> Any:
        with self._lock:
            row = self._run(sql, params).fetchone()
            return row[0] if row else None

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """A write transaction (BEGIN IMMEDIATE). Nested use joins the outer transaction."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            self._run("BEGIN IMMEDIATE", ())
            self._depth = 1
            try:
                yield self
            except BaseException:
                self._depth = 0
                self._conn.execute("ROLLBACK")
                raise
            self._depth = 0
            try:
                self._conn.execute("COMMIT")
            except ValueError as exc:
                self._conn.execute("ROLLBACK")
                raise DatabaseError(f"commit failed: {exc}") from exc
