"""A remote libSQL database (Turso) over Hrana/HTTP that survives transient failures.

The ``libsql`` client raises a bare ``ValueError`` for everything; ``classify`` reads its message:

- not executed, retry as is: HTTP 429/502/503, a refused connection, ``SQLITE_BUSY``;
- stream lost (``STREAM_EXPIRED``, ``BATON_*``): the request did not run, but the client never
  recovers (its stale baton is refused forever), so a new connection is opened;
- unknown outcome (the connection dropped after the request was sent, HTTP 500/504): the
  request may or may not have run.

A transaction keeps a log of its statements and their results. If its stream is lost or a
statement's outcome is unknown, a new connection begins a new transaction and replays the log,
checking that every statement gives the same result; the caller's code then carries on as if
nothing happened. Every transaction commits together with a marker row (``_iris_commits``), so
a commit whose answer was lost is resolved exactly: once a new transaction holds the write lock
the old one has either committed (the marker is there) or never will (it is replayed and
committed again). Writes outside a transaction run in one, so no write is ever sent twice
blindly.
"""

from __future__ import annotations

import contextlib
import random
import re
import secrets
import time
from dataclasses import dataclass
from enum import Enum
from typing import Any

from core.clock import Clock

COMMITS_TABLE = "_iris_commits"
_PRUNE_EVERY = 500  # commits between two prunes of old markers
_MARKER_DAYS = 2.0


class Failure(Enum):
    NOT_EXECUTED = "not executed"
    STREAM_LOST = "stream lost"
    UNKNOWN = "outcome unknown"
    FATAL = "fatal"


_STATUS = re.compile(r"status=(\d{3})")
_CODE = re.compile(r'code: "([A-Z_]+)"|"code": "([A-Z_]+)"')
_STREAM_CODES = {"STREAM_EXPIRED", "BATON_INVALID", "BATON_REUSED", "BATON_STREAM_CLOSED",
                 "STREAM_CLOSED"}


def classify(exc: Exception) -> Failure:
    message = str(exc)
    match = _CODE.search(message)
    code = (match.group(1) or match.group(2)) if match else ""
    if "stream error" in message or "cursor error" in message:
        if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return Failure.NOT_EXECUTED
        return Failure.STREAM_LOST if code in _STREAM_CODES else Failure.FATAL
    status = _STATUS.search(message)
    if status:
        number = int(status.group(1))
        if number in (429, 502, 503):
            return Failure.NOT_EXECUTED
        if code in _STREAM_CODES:
            return Failure.STREAM_LOST
        if number in (500, 504) or number == 408:
            return Failure.UNKNOWN
        return Failure.FATAL
    if "error trying to connect" in message or "dns error" in message:
        return Failure.NOT_EXECUTED
    if "http error" in message:
        return Failure.UNKNOWN
    return Failure.FATAL


class Unavailable(Exception):
    """The database stayed unreachable (or busy) for the whole retry window."""


class Diverged(Exception):
    """A lost transaction could not be replayed: the database changed meanwhile."""


@dataclass
class Outcome:
    """What one statement gave: column names, rows and changed-row count, or an error."""

    names: tuple[str, ...] | None
    rows: list[tuple[Any, ...]]
    rowcount: int
    error: str | None = None

    def same_as(self, other: Outcome) -> bool:
        if self.names is None and other.names is None:  # no result set: compare changes
            return (self.rowcount, self.error) == (other.rowcount, other.error)
        return (self.names, self.rows, self.error) == (other.names, other.rows, other.error)


@dataclass(frozen=True)
class Step:
    sql: str
    params: Any
    outcome: Outcome


class Backoff:
    """Exponential backoff with jitter, within a deadline; each wait counts a retry."""

    def __init__(self, window: float, counters: dict[str, int], *, first: float = 0.05,
                 cap: float = 1.0):
        self.deadline = time.monotonic() + window
        self._counters = counters
        self._delay = first
        self._cap = cap

    def wait(self, reason: Exception | str) -> None:
        if time.monotonic() >= self.deadline:
            raise Unavailable(str(reason))
        self._counters["retries"] += 1
        pause = min(self._delay, max(0.0, self.deadline - time.monotonic()))
        time.sleep(pause * random.uniform(0.5, 1.0))
        self._delay = min(self._delay * 2, self._cap)


class SqlError(Exception):
    """The database refused the statement (constraint, syntax, ...): not a transport problem."""


def _read_only(sql: str) -> bool:
    head = sql.lstrip().split(None, 1)
    word = head[0].upper() if head else ""
    if word in ("SELECT", "EXPLAIN", "VALUES"):
        return True
    if word == "PRAGMA":
        return "=" not in sql
    if word == "WITH":
        return not re.search(r"\b(INSERT|UPDATE|DELETE|REPLACE)\b", sql, re.IGNORECASE)
    return False


class RemoteLink:
    """One libsql remote connection, replaced whenever its stream is lost."""

    def __init__(self, url: str, token: str, clock: Clock, *, retry_for: float):
        import libsql

        self._connect = lambda: libsql.connect(url, isolation_level=None, auth_token=token)
        self._conn = self._connect()
        self._clock = clock
        self.retry_for = retry_for
        self._log: list[Step] | None = None  # the open transaction's statements
        self._marker = ""
        self._commits = 0
        # retries: transient failures waited out; replays: transactions replayed on a new
        # connection; lost_commits: commits whose answer was lost, and how many of those had
        # in fact committed (found_commits)
        self.counters = {"retries": 0, "replays": 0, "lost_commits": 0, "found_commits": 0}

    def _backoff(self) -> Backoff:
        return Backoff(self.retry_for, self.counters)

    @staticmethod
    def read_only(sql: str) -> bool:
        return _read_only(sql)

    def _reconnect(self) -> None:
        old, self._conn = self._conn, self._connect()
        with contextlib.suppress(Exception):  # its stream is gone; the server expires it
            old.close()

    def _once(self, sql: str, params: Any) -> Outcome:
        """Run one statement; ValueError from the client escapes, SQL errors become SqlError."""
        try:
            cursor = self._conn.execute(sql, params)
            rows = [tuple(row) for row in cursor.fetchall() or ()]
        except ValueError as exc:
            if classify(exc) is Failure.FATAL:
                raise SqlError(str(exc)) from exc
            raise
        names = tuple(c[0] for c in cursor.description) if cursor.description else None
        return Outcome(names=names, rows=rows, rowcount=cursor.rowcount)

    # -- statements ---------------------------------------------------------------------------
    def run(self, sql: str, params: Any) -> Outcome:
        """One statement, retried until it gives an answer; inside a transaction it is logged
        (an error too: the caller may carry on after it)."""
        backoff = self._backoff()
        while True:
            try:
                outcome = self._once(sql, params)
            except SqlError as exc:
                if self._log is not None:
                    self._log.append(Step(sql, params, Outcome(None, [], 0, error=str(exc))))
                raise
            except ValueError as exc:
                failure = classify(exc)
                backoff.wait(exc)
                if failure is Failure.NOT_EXECUTED:
                    continue
                if self._log is not None:
                    self._recover(backoff)
                else:
                    self._reconnect()  # a read, or a stream lost before the write ran
                continue
            if self._log is not None:
                self._log.append(Step(sql, params, outcome))
            return outcome

    # -- transactions -------------------------------------------------------------------------
    @property
    def in_transaction(self) -> bool:
        return self._log is not None

    def _begin_once(self, backoff: Backoff) -> None:
        """BEGIN IMMEDIATE on the current connection, waiting out busy and transient errors
        (a lost answer may have begun a transaction on a stream now orphaned: it expires)."""
        while True:
            try:
                self._once("BEGIN IMMEDIATE", ())
                return
            except ValueError as exc:
                failure = classify(exc)
                backoff.wait(exc)
                if failure is not Failure.NOT_EXECUTED:
                    self._reconnect()

    def begin(self) -> None:
        self._begin_once(self._backoff())
        self._log = []
        self._marker = secrets.token_hex(16)

    def _replay(self, log: list[Step]) -> None:
        for step in log:
            try:
                outcome = self._once(step.sql, step.params)
            except SqlError as exc:
                outcome = Outcome(None, [], 0, error=str(exc))
            if not outcome.same_as(step.outcome):
                raise Diverged(f"replaying {step.sql.split(None, 1)[0]} gave another result")

    def _recover(self, backoff: Backoff) -> None:
        """The transaction's stream is gone: begin again on a new connection and replay."""
        log = self._log or []
        self.counters["replays"] += 1
        while True:
            self._reconnect()
            self._begin_once(backoff)
            try:
                self._replay(log)
                return
            except ValueError as exc:
                backoff.wait(exc)

    def _mark(self) -> None:
        """Insert the transaction's marker, logged like any statement (a replay repeats it),
        and now and then drop markers old enough that no lost commit can still ask for them."""
        now = float(self._clock.now())
        self._commits += 1
        if self._commits % _PRUNE_EVERY == 0:
            self.run(f"DELETE FROM {COMMITS_TABLE} WHERE at < ?", (now - _MARKER_DAYS * 86400,))
        self.run(f"INSERT INTO {COMMITS_TABLE} (id, at) VALUES (?, ?)", (self._marker, now))

    def _committed(self, backoff: Backoff) -> bool:
        """After a lost answer to COMMIT: hold the write lock on a new connection, so the old
        transaction is settled, then look for its marker. Leaves a transaction open when the
        answer is no (the caller replays into it)."""
        while True:
            self._reconnect()
            self._begin_once(backoff)
            try:
                found = self._once(f"SELECT 1 FROM {COMMITS_TABLE} WHERE id = ?", (self._marker,))
            except ValueError as exc:
                backoff.wait(exc)
                continue
            if found.rows:
                self.rollback()
                return True
            return False

    def _replay_or_recover(self, log: list[Step], backoff: Backoff) -> None:
        try:
            self._replay(log)
        except ValueError as exc:
            backoff.wait(exc)
            self._recover(backoff)

    def commit(self) -> None:
        """Insert the marker and COMMIT. A lost answer is resolved through the marker: found,
        it committed; not found (once the old transaction can no longer commit), the log is
        replayed on a new connection and committed there."""
        backoff = self._backoff()
        try:
            self._mark()
            while True:
                try:
                    self._once("COMMIT", ())
                    return
                except ValueError as exc:
                    failure = classify(exc)
                    backoff.wait(exc)
                    if failure is Failure.NOT_EXECUTED:
                        continue
                    if failure is Failure.STREAM_LOST:  # it did not run: replay and commit
                        self._recover(backoff)
                        continue
                    self.counters["lost_commits"] += 1
                    if self._committed(backoff):
                        self.counters["found_commits"] += 1
                        return
                    self._replay_or_recover(self._log or [], backoff)
        finally:
            self._log = None

    def rollback(self) -> None:
        self._log = None
        try:
            self._once("ROLLBACK", ())
        except (ValueError, SqlError):
            self._reconnect()  # the server rolls the orphaned transaction back when it expires

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self._conn.close()


_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


def split_statements(sql: str) -> list[str]:
    """The complete statements of a script (triggers' inner semicolons included), in order."""
    import sqlite3

    statements: list[str] = []
    buffer = ""
    for piece in sql.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if _COMMENTS.sub("", buffer).strip(" \t\r\n;"):
                statements.append(buffer.strip())
            buffer = ""
    if _COMMENTS.sub("", buffer).strip(" \t\r\n;"):
        statements.append(buffer.strip().rstrip(";"))
    return statements
