"""The database: libSQL (a local file, or a Turso/libSQL server), one connection per process.

libsql keeps the GIL while it waits on a locked database, so two connections in one process
that contend for the write lock stall each other until the busy timeout. All access in a process
therefore goes through one connection guarded by a re-entrant lock; separate processes
coordinate through SQLite's own locking (WAL + busy timeout).

A remote database (``libsql://``, ``https://``, ``http://``) goes through ``core.store.remote``
(Iris' own Hrana client, ``core.store.hrana``; libsql is used for files only): transient failures
are retried for up to ``retry_for`` seconds, a lost transaction is replayed on a new stream, a
lost commit is resolved through its marker, and writes outside a transaction run in one, so
nothing is ever committed twice. ``batch`` runs several statements in one round trip.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from core.clock import SYSTEM_CLOCK, Clock
from core.private import private_file
from core.store.sqltext import read_only

if TYPE_CHECKING:
    from core.store.remote import RemoteLink
    from core.store.remote_links import ThreadLinks

Row = dict[str, Any]
Params = Sequence[Any] | dict[str, Any]
Statement = tuple[str, Params]
_KEEP_SECONDS = 5.0


@dataclass(frozen=True)
class Result:
    """One statement's rows (a write's: those it RETURNs) and changed-row count."""

    rows: list[Row]
    rowcount: int


def _frozen(params: Params) -> Any:
    if isinstance(params, dict):
        return tuple(sorted(params.items()))
    return tuple(params)


def _result(cursor: Any) -> Result:
    rows = cursor.fetchall() or []
    names = [col[0] for col in cursor.description] if cursor.description else []
    return Result([dict(zip(names, row, strict=True)) for row in rows], cursor.rowcount)


class DatabaseError(Exception):
    """A database operation failed; the message says which and why."""


class DatabaseClosed(DatabaseError):
    """A statement after ``close()``: work that outlived its store (a bug of its owner)."""


class DatabaseUnavailable(DatabaseError):
    """The database could not be reached (or stayed locked) for the whole retry window."""


class NotApplied(DatabaseError):
    """A guarded write (``write_then_read``'s ``guard``) found its guard statement changing
    other than exactly one row: nothing of it was committed."""


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
        self.url = url
        self.clock = clock  # the time every repository stamps and compares with
        # a file: one connection behind this lock; a remote database: one link per thread
        # (core.store.remote_links), nothing process-wide to wait for
        self._lock: AbstractContextManager[Any] = threading.RLock()
        self._local = threading.local()  # the calling thread's transaction depth
        self._links: ThreadLinks | None = None
        # prefetched reads, each for the first query asking for it: (expiry, outcome)
        self._kept: dict[tuple[str, Any], list[tuple[float, Any]]] = {}
        self._kept_lock = threading.Lock()
        self.loop_calls = 0  # statements run on a thread that runs an event loop (see _run)
        self._closed = False
        if not url.startswith("file:"):
            self._open_remote(url, auth_token or "", retry_for)
            return
        import libsql

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
        from core.store.remote import RemoteLink
        from core.store.remote_links import ThreadLinks

        def make() -> RemoteLink:
            return RemoteLink(url, token, self.clock, retry_for=retry_for)

        try:
            first = make()
        except ValueError as exc:  # a malformed URL
            raise DatabaseError(f"cannot open database {url}: {exc}") from exc
        with self._remote_errors(f"cannot open database {url}"):
            first.setup()
        self._links = ThreadLinks(make)
        self._links.retire(first)
        self._lock = nullcontext()

    @property
    def _depth(self) -> int:
        depth: int = getattr(self._local, "depth", 0)
        return depth

    @_depth.setter
    def _depth(self, value: int) -> None:
        self._local.depth = value

    @property
    def _remote(self) -> RemoteLink | None:
        """The calling thread's link to a remote database; None for a file."""
        if self._links is None:
            return None
        if self._closed:
            raise DatabaseClosed("the database is closed")
        return self._links.current()

    @property
    def remote(self) -> bool:
        return self._links is not None

    def remote_counters(self) -> dict[str, int]:
        """How often a remote database needed a retry, a replay or a commit resolved, and
        how many HTTP round trips it has made and how long it waited for them."""
        if self._links is None:
            return {}
        return self._links.counters()

    @contextmanager
    def _remote_errors(self, what: str) -> Iterator[None]:
        from core.store.remote import Diverged, SqlError, Unavailable
        from core.store.remote import NotApplied as RemoteNotApplied

        try:
            yield
        except RemoteNotApplied as exc:
            raise NotApplied(str(exc)) from exc
        except (SqlError, ValueError) as exc:  # ValueError: a value Hrana cannot carry
            raise DatabaseError(f"{exc} [{what}]") from exc
        except Unavailable as exc:
            raise DatabaseUnavailable(f"database unreachable ({what}): {exc}") from exc
        except Diverged as exc:
            raise TransactionLost(f"transaction lost ({what}): {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._links is not None:
                self._links.close()
            else:
                self._conn.close()

    def _run(self, sql: str, params: Params) -> Any:
        if self._closed:  # libsql's closed connection panics (a BaseException) instead
            raise DatabaseClosed(f"the database is closed [{sql.split(None, 1)[0]}]")
        if _on_event_loop():
            self.loop_calls += 1
        if self._links is not None:
            return self._run_remote(sql, params)
        try:
            return self._conn.execute(sql, params)
        except ValueError as exc:
            raise DatabaseError(f"{exc} [{sql.split(None, 1)[0]}]") from exc

    def _run_remote(self, sql: str, params: Params) -> Any:
        assert self._remote is not None
        remote = self._remote
        read_only = remote.read_only(sql)
        if not read_only:
            self._forget_kept()
        elif not self._depth and (kept := self._take_kept(sql, params)) is not None:
            return _Answer(kept)
        with self._remote_errors(sql.split(None, 1)[0]):
            if self._depth or read_only:
                return _Answer(remote.run(sql, params))
            if not remote.returns_rows(sql):  # its own transaction, in one round trip
                return _Answer(remote.write_once(sql, params))
        with self.transaction():  # rows before the commit: two round trips
            return self._run_remote(sql, params)

    # -- several statements per round trip (a remote database; a file runs them one by one) --
    def batch(self, statements: Sequence[Statement]) -> list[Result]:
        """Run ``statements`` in order, as one request to a remote database. Inside a
        transaction they join it; outside, if any of them writes they run in one transaction.
        The first error stops the rest."""
        with self._lock:
            if self._remote is None or not statements:
                if self._depth or all(read_only(sql) for sql, _ in statements):
                    return [_result(self._run(sql, params)) for sql, params in statements]
                with self.transaction():
                    return [_result(self._run(sql, params)) for sql, params in statements]
            if not self._depth and not all(self._remote.read_only(sql) for sql, _ in statements):
                with self.transaction():
                    return self.batch(statements)
            self._forget_kept()
            with self._remote_errors("batch"):
                outcomes = self._remote.run_many(list(statements))
            return [Result(_Answer(o).rows(), o.rowcount) for o in outcomes]

    def write_then_read(
        self, writes: Sequence[Statement], reads: Sequence[Statement],
        keep: Sequence[Statement] = (), *, guard: int | None = None,
    ) -> tuple[int, list[list[Row]]]:
        """Commit ``writes`` as one transaction, then run ``reads``: one round trip to a remote
        database (the writes' results are not returned, only the last one's changed-row count,
        kept with the commit marker so that a lost answer is resolved). ``keep``: more reads
        whose results are kept for the first query that asks for the same statement (see
        ``prefetch``). Inside a transaction, they join it (and ``keep`` is not read).
        ``guard``: the index of a write that must change exactly one row (a compare-and-set),
        else nothing is committed and ``NotApplied`` is raised; the count returned is then the
        guard's."""
        split = len(writes) if guard is None else guard + 1
        with self._lock:
            if self._depth:  # inside a transaction: its statements join it
                first = self.batch(writes[:split])
                changed = first[-1].rowcount if first else 0
                if guard is not None and changed != 1:
                    raise NotApplied(f"statement {guard} changed {changed} rows, not one")
                rest = self.batch([*writes[split:], *reads])
                return changed, [r.rows for r in rest[len(writes) - split:]]
            if self._remote is None:
                counts: list[int] = []
                with self.transaction():
                    for index, (sql, params) in enumerate(writes):
                        counts.append(self._run(sql, params).rowcount)
                        if index == guard and counts[-1] != 1:
                            raise NotApplied(f"statement {guard} changed {counts[-1]} rows,"
                                             " not one")
                rows = [self.query(sql, params) for sql, params in reads]
                return (counts[split - 1] if counts else 0), rows
            self._forget_kept()
            with self._remote_errors("write"):
                changed, outcomes = self._remote.write_then_read(list(writes),
                                                                 [*reads, *keep], guard=guard)
            self._keep(keep, outcomes[len(reads):])
            return changed, [_Answer(o).rows() for o in outcomes[:len(reads)]]

    def prefetch(self, reads: Sequence[Statement]) -> None:
        """Run ``reads`` now, in one round trip to a remote database, and keep each result for
        the first query that asks for the very same statement, until this process writes (or
        after a few seconds). A file database reads as fast as it looks up: nothing is done."""
        with self._lock:
            if self._remote is None or self._depth or not reads:
                return
            with self._remote_errors("prefetch"):
                outcomes = self._remote.read(list(reads))
            self._keep(reads, outcomes)

    def _keep(self, reads: Sequence[Statement], outcomes: Sequence[Any]) -> None:
        expires = time.monotonic() + _KEEP_SECONDS
        with self._kept_lock:
            for (sql, params), outcome in zip(reads, outcomes, strict=True):
                self._kept.setdefault((sql, _frozen(params)), []).append((expires, outcome))

    def _forget_kept(self) -> None:
        with self._kept_lock:
            self._kept.clear()

    def _take_kept(self, sql: str, params: Params) -> Any:
        with self._kept_lock:
            found = self._kept.get((sql, _frozen(params)))
            if not found:
                return None
            expires, outcome = found.pop(0)
            if not found:
                del self._kept[(sql, _frozen(params))]
        return outcome if expires >= time.monotonic() else None

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; returns the number of rows changed (or the last insert id for an
        INSERT ... RETURNING-less insert is not returned: use ``one`` with RETURNING)."""
        with self._lock:
            cursor = self._run(sql, params)
            return cast("int", cursor.rowcount)

    def executescript(self, sql: str) -> None:
        with self._lock:
            if self._closed:
                raise DatabaseClosed("the database is closed [script]")
            if self._remote is None:
                self._conn.executescript(sql)
                return
            from core.store.remote import split_statements

            with self.transaction(), self._remote_errors("script"):
                self._remote.run_many([(statement, ()) for statement in split_statements(sql)])

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
            if self._closed:
                raise DatabaseClosed("the database is closed [transaction]")
            if self._depth:
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            if self._remote is not None:
                self._forget_kept()
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


def _on_event_loop() -> bool:
    """Whether the calling thread is running an event loop: a statement run there holds up
    every other request the loop serves (``core.lanes.in_store_lane`` runs them off it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _Answer:
    """A remote statement's result, read the way a DB-API cursor is."""

    def __init__(self, outcome: Any):
        self._rows = outcome.rows
        self.rowcount = outcome.rowcount
        self.description = [(name,) for name in outcome.names] if outcome.names else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return cast("list[tuple[Any, ...]]", self._rows)

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None

    def rows(self) -> list[Row]:
        if not self._rows or not self.description:
            return []
        names = [col[0] for col in self.description]
        return [dict(zip(names, row, strict=True)) for row in self._rows]
