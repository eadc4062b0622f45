"""The database: libSQL (a local file, or a Turso/libSQL server), one connection per process.

libsql keeps the GIL while it waits on a locked database, so two connections in one process
that contend for the write lock stall each other until the busy timeout. All access in a process
therefore goes through one connection guarded by a re-entrant lock; separate processes
coordinate through SQLite's own locking (WAL + busy timeout).

A remote database (``libsql://``, ``https://``, ``http://``) goes through ``core.store.remote``:
transient failures are retried for up to ``retry_for`` seconds, a lost transaction is replayed
on a new connection, a lost commit is resolved through its marker, and writes outside a
transaction run in one, so nothing is ever committed twice.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.clock import SYSTEM_CLOCK, Clock
from core.private import private_file

if TYPE_CHECKING:
    from core.store.remote import RemoteLink

Row = dict[str, Any]
Params = Sequence[Any] | dict[str, Any]


class DatabaseError(Exception):
    """A database operation failed; the message says which and why."""


class DatabaseUnavailable(DatabaseError):
    """The database could not be reached (or stayed locked) for the whole retry window."""


class TransactionLost(DatabaseError):
    """A transaction's connection was lost and the database changed before it could be
    replayed: nothing of it was committed; running it again from the start is safe."""


def _file_path(url: str) -> str:
    path = url.removeprefix("file:")
    if path.startswith("//"):
        path = path[2:]
    return path


class Database:
    def __init__(
        self, url: str, auth_token: str | None = None, *, busy_timeout: float = 15.0,
        clock: Clock = SYSTEM_CLOCK, retry_for: float = 30.0,
    ):
        import libsql

        self.url = url
        self.clock = clock  # the time every repository stamps and compares with
        self._lock = threading.RLock()
        self._depth = 0
        self._remote: RemoteLink | None = None
        if not url.startswith("file:"):
            self._open_remote(url, auth_token or "", retry_for)
            return
        try:
            path = _file_path(url)
            if path != ":memory:":  # 0600 in a 0700 directory: SQLite gives -wal the same
                private_file(Path(path))
            self._conn = libsql.connect(path, isolation_level=None, timeout=busy_timeout)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            self._conn.execute("PRAGMA synchronous=NORMAL")
        except Exception as exc:  # libsql raises plain ValueError/RuntimeError
            raise DatabaseError(f"cannot open database {url}: {exc}") from exc
        self._conn.execute("PRAGMA foreign_keys=ON")

    def _open_remote(self, url: str, token: str, retry_for: float) -> None:
        from core.store.remote import COMMITS_TABLE, RemoteLink

        try:
            self._remote = RemoteLink(url, token, self.clock, retry_for=retry_for)
        except Exception as exc:  # a malformed URL: libsql raises ValueError/RuntimeError
            raise DatabaseError(f"cannot open database {url}: {exc}") from exc
        with self._remote_errors(f"cannot open database {url}"):
            self._remote.run(
                f"CREATE TABLE IF NOT EXISTS {COMMITS_TABLE}"
                " (id TEXT PRIMARY KEY, at REAL NOT NULL)", (),
            )

    @property
    def remote(self) -> bool:
        return self._remote is not None

    def remote_counters(self) -> dict[str, int]:
        """How often a remote database needed a retry, a replay or a commit resolved."""
        return dict(self._remote.counters) if self._remote is not None else {}

    @contextmanager
    def _remote_errors(self, what: str) -> Iterator[None]:
        from core.store.remote import Diverged, SqlError, Unavailable

        try:
            yield
        except SqlError as exc:
            raise DatabaseError(f"{exc} [{what}]") from exc
        except Unavailable as exc:
            raise DatabaseUnavailable(f"database unreachable ({what}): {exc}") from exc
        except Diverged as exc:
            raise TransactionLost(f"transaction lost ({what}): {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if self._remote is not None:
                self._remote.close()
            else:
                self._conn.close()

    def _run(self, sql: str, params: Params) -> Any:
        if self._remote is not None:
            return self._run_remote(sql, params)
        try:
            return self._conn.execute(sql, params)
        except ValueError as exc:
            raise DatabaseError(f"{exc} [{sql.split(None, 1)[0]}]") from exc

    def _run_remote(self, sql: str, params: Params) -> Any:
        assert self._remote is not None
        if not self._depth and not self._remote.read_only(sql):
            with self.transaction():  # so that a lost answer is resolved, never sent twice
                return self._run_remote(sql, params)
        with self._remote_errors(sql.split(None, 1)[0]):
            return _Answer(self._remote.run(sql, params))

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; returns the number of rows changed (or the last insert id for an
        INSERT ... RETURNING-less insert is not returned: use ``one`` with RETURNING)."""
        with self._lock:
            cursor = self._run(sql, params)
            return cursor.rowcount

    def executescript(self, sql: str) -> None:
        with self._lock:
            if self._remote is None:
                self._conn.executescript(sql)
                return
            from core.store.remote import split_statements

            with self.transaction():  # libsql's remote executescript drops statement errors
                for statement in split_statements(sql):
                    self._run(statement, ())

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
            if self._remote is not None:
                with self._remote_transaction():
                    yield self
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

    @contextmanager
    def _remote_transaction(self) -> Iterator[None]:
        remote = self._remote
        assert remote is not None
        with self._remote_errors("BEGIN"):
            remote.begin()
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            remote.rollback()
            raise
        self._depth = 0
        try:
            with self._remote_errors("COMMIT"):
                remote.commit()
        except DatabaseError:
            remote.rollback()
            raise


class _Answer:
    """A remote statement's result, read the way a DB-API cursor is."""

    def __init__(self, outcome: Any):
        self._rows = outcome.rows
        self.rowcount = outcome.rowcount
        self.description = [(name,) for name in outcome.names] if outcome.names else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None
