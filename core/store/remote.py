"""A remote libSQL database (Turso) over Hrana/HTTP that survives transient failures, in as few
round trips as the guarantees allow (``core.store.hrana`` speaks the protocol).

- A read outside a transaction is one request on a stream closed in the same request.
- A write outside a transaction is its own transaction in one request: ``BEGIN IMMEDIATE``, the
  statement, the commit marker (which also records the statement's changed-row count) and
  ``COMMIT``, each step run only if the one before succeeded. A write with ``RETURNING`` needs its
  rows before it commits, so it is a transaction of two requests.
- A transaction sends ``BEGIN IMMEDIATE`` with its first statements and the marker with its
  ``COMMIT``: a transaction of n requests' worth of statements costs n + 1 round trips.

Recovery: a request answered 429/502/503 or refused did not run and is sent again. A step
refused as busy (``SQLITE_BUSY``/``_LOCKED``, sqld's ``TRANSACTION_TIMEOUT``/``_BUSY``) is sent
again after a pause; when the server rolled the transaction back, it is replayed first. A
transaction keeps a log of its statements and their results; if its stream is lost or a
request's outcome is unknown, a new stream begins a new transaction and replays the log (in one
request), checking that every statement gives the same result; the caller's code carries on as
if nothing happened. Every transaction commits together with a marker row (``_iris_commits``),
so a commit whose answer was lost is resolved exactly: once a new transaction holds the write
lock the old one has either committed (the marker is there) or never will (it is replayed and
committed again, under the same marker, so a late copy of the old request would fail on it).
No write is ever sent twice blindly.
"""

from __future__ import annotations

import contextlib
import random
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.clock import Clock
from core.store.hrana import (
    Failure,
    HranaClient,
    Outcome,
    StepError,
    Stream,
    TransportError,
    batch_steps,
    chained,
)
from core.store.sqltext import read_only as _read_only

COMMITS_TABLE = "_iris_commits"
_PRUNE_EVERY = 500  # commits between two prunes of old markers
_MARKER_DAYS = 2.0
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
Statements = list[tuple[str, Any]]
_BEGIN: tuple[str, Any] = ("BEGIN IMMEDIATE", ())
_COMMIT: tuple[str, Any] = ("COMMIT", ())


class Unavailable(Exception):
    """The database stayed unreachable (or busy) for the whole retry window."""


class Diverged(Exception):
    """A lost transaction could not be replayed: the database changed meanwhile."""


class SqlError(Exception):
    """The database refused the statement (constraint, syntax, ...): not a transport problem."""


class NotApplied(Exception):
    """A guarded transaction's guard statement did not change exactly one row: nothing of it
    was committed."""


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


def _response_steps(response: dict[str, Any]) -> list[Any]:
    if response.get("type") == "error":  # the whole request was refused (malformed)
        error = response.get("error") or {}
        raise SqlError(f"{error.get('code')}: {error.get('message')}")
    return batch_steps(response)


class RemoteLink:
    """Statements and transactions over Hrana, retried, replayed and resolved as above."""

    def __init__(self, url: str, token: str, clock: Clock, *, retry_for: float):
        self._client = HranaClient(url, token)
        self._clock = clock
        self.retry_for = retry_for
        self._stream = Stream()
        self._log: list[Step] | None = None  # the open transaction's statements
        self._begun = False  # BEGIN has been sent on self._stream
        self._marker = ""
        self._commits = 0
        # retries: transient failures waited out; replays: transactions replayed on a new
        # stream; lost_commits: commits whose answer was lost, and how many of those had
        # in fact committed (found_commits)
        self.counters = {"retries": 0, "replays": 0, "lost_commits": 0, "found_commits": 0}

    @property
    def round_trips(self) -> int:
        return self._client.round_trips

    @property
    def waited_ms(self) -> int:
        """Milliseconds spent waiting for the database's answers."""
        return round(self._client.waited * 1000)

    def _backoff(self) -> Backoff:
        return Backoff(self.retry_for, self.counters)

    @staticmethod
    def read_only(sql: str) -> bool:
        return _read_only(sql)

    @staticmethod
    def returns_rows(sql: str) -> bool:
        return _read_only(sql) or bool(_RETURNING.search(sql))

    def _send(self, stream: Stream, requests: list[dict[str, Any]], backoff: Backoff, *,
              close: bool = False) -> list[dict[str, Any]]:
        """One request, sent again while it was not executed; other failures escape."""
        while True:
            try:
                return self._client.pipeline(stream, requests, close=close)
            except TransportError as exc:
                if exc.failure is Failure.FATAL:
                    raise SqlError(str(exc)) from exc
                if exc.failure is not Failure.NOT_EXECUTED:
                    raise
                backoff.wait(exc)

    def setup(self) -> None:
        """The marker table (and its ``changes`` column, added to older databases)."""
        backoff = self._backoff()
        statements: Statements = [
            (f"CREATE TABLE IF NOT EXISTS {COMMITS_TABLE}"
             " (id TEXT PRIMARY KEY, at REAL NOT NULL, changes INTEGER)", ()),
            (f"SELECT count(*) FROM pragma_table_info('{COMMITS_TABLE}')"
             " WHERE name = 'changes'", ()),
        ]
        found = self.read(statements, backoff)[1]
        if not found.rows[0][0]:
            try:
                self.read([(f"ALTER TABLE {COMMITS_TABLE} ADD COLUMN changes INTEGER", ())],
                          backoff)
            except SqlError as exc:  # another process added it first
                if "duplicate column" not in str(exc):
                    raise

    # -- outside a transaction ----------------------------------------------------------------
    def read(self, statements: Statements, backoff: Backoff | None = None) -> list[Outcome]:
        """Statements that change nothing (or are idempotent), in one request."""
        backoff = backoff or self._backoff()
        while True:
            try:
                [response] = self._send(Stream(), [chained(statements)], backoff, close=True)
            except TransportError as exc:  # safe to send again
                backoff.wait(exc)
                continue
            steps = _response_steps(response)
            busy = next((s for s in steps if isinstance(s, StepError) and s.busy), None)
            if busy is not None:
                backoff.wait(str(busy))
                continue
            for step in steps:
                if isinstance(step, StepError):
                    raise SqlError(str(step))
            return [s for s in steps if isinstance(s, Outcome)]

    def _marker_statements(self, marker: str, *, guard: bool = False) -> Statements:
        """The marker (keeping the changed-row count of the statement before it), and now and
        then a prune of markers old enough that no lost commit can still ask for them. A
        ``guard`` marker fails (its ``at`` is NULL, a NOT NULL column) unless the statement
        before it changed exactly one row: the transaction then cannot commit."""
        now = float(self._clock.now())
        self._commits += 1
        at = "CASE WHEN changes() = 1 THEN ? END" if guard else "?"
        statements: Statements = [(f"INSERT INTO {COMMITS_TABLE} (id, at, changes)"
                                   f" VALUES (?, {at}, changes())", (marker, now))]
        if self._commits % _PRUNE_EVERY == 0:
            statements.append((f"DELETE FROM {COMMITS_TABLE} WHERE at < ?",
                               (now - _MARKER_DAYS * 86400,)))
        return statements

    def write_once(self, sql: str, params: Any) -> Outcome:
        """A write that is its own transaction, in one request."""
        changed, _ = self.write_then_read([(sql, params)], [])
        return Outcome(None, [], changed)

    def write_then_read(self, writes: Statements, reads: Statements, *,
                        guard: int | None = None) -> tuple[int, list[Outcome]]:
        """``writes`` as one transaction, then ``reads``, in one request. Returns the last
        write's changed-row count (with ``guard``: the guard's) and the reads' outcomes. A lost
        answer is resolved through the marker, which also holds that count; the reads are then
        sent again. ``guard``: the index of a write that must change exactly one row, or
        nothing commits and ``NotApplied`` is raised (the marker follows it and fails)."""
        backoff = self._backoff()
        marker = secrets.token_hex(16)
        split = len(writes) if guard is None else guard + 1
        marks = self._marker_statements(marker, guard=guard is not None)
        statements = [_BEGIN, *writes[:split], *marks, *writes[split:], _COMMIT, *reads]
        marked_at = split + 1  # the marker's step
        committed_at = len(statements) - len(reads) - 1
        while True:
            try:
                [response] = self._send(Stream(), [chained(statements)], backoff, close=True)
            except TransportError as exc:
                backoff.wait(exc)
                self.counters["lost_commits"] += 1
                found = self._marker_changes(marker, backoff)
                if found is None:
                    continue  # it never ran and never will: send it again
                self.counters["found_commits"] += 1
                return found, (self.read(reads, backoff) if reads else [])
            steps = _response_steps(response)
            failed = next((s for s in steps if isinstance(s, StepError)), None)
            if failed is not None and (failed.busy or steps.index(failed) == 0):
                if not failed.busy:
                    raise SqlError(str(failed))
                if isinstance(steps[committed_at], Outcome):  # a read was busy: read again
                    return self._changes(steps, split), self.read(reads, backoff)
                backoff.wait(str(failed))  # closing the stream rolled the writes back
                continue
            if failed is not None:  # closing the stream rolled the writes back
                if guard is not None and steps.index(failed) == marked_at:
                    raise NotApplied(f"statement {guard} did not change exactly one row")
                raise SqlError(str(failed))
            outcomes = [s for s in steps[committed_at + 1:] if isinstance(s, Outcome)]
            return self._changes(steps, split), outcomes

    @staticmethod
    def _changes(steps: list[Any], writes: int) -> int:
        last = steps[writes] if writes else None
        return last.rowcount if isinstance(last, Outcome) else 0

    def _marker_changes(self, marker: str, backoff: Backoff) -> int | None:
        """Holding the write lock (so an earlier request is settled), the changed-row count
        recorded with ``marker``, or None when it never committed."""
        statements: Statements = [
            _BEGIN, (f"SELECT changes FROM {COMMITS_TABLE} WHERE id = ?", (marker,)), _COMMIT,
        ]
        found = self._look_up(statements, Stream, backoff, close=True)
        return int(found.rows[0][0] or 0) if found.rows else None

    def _look_up(self, statements: Statements, new_stream: Callable[[], Stream],
                 backoff: Backoff, *, close: bool = False) -> Outcome:
        """Send ``statements`` (BEGIN, a lookup, …) on a new stream each try until every step
        succeeds (or ``backoff`` gives up); the lookup's outcome."""
        while True:
            try:
                [response] = self._send(new_stream(), [chained(statements)], backoff,
                                        close=close)
            except TransportError as exc:
                backoff.wait(exc)
                continue
            steps = _response_steps(response)
            failed = next((s for s in steps if isinstance(s, StepError)), None)
            if failed is None:
                found = steps[1]
                assert isinstance(found, Outcome)
                return found
            backoff.wait(str(failed))

    # -- transactions -------------------------------------------------------------------------
    @property
    def in_transaction(self) -> bool:
        return self._log is not None

    def begin(self) -> None:
        """Nothing is sent: BEGIN IMMEDIATE goes with the transaction's first statements."""
        self._log = []
        self._begun = False
        self._stream = Stream()
        self._marker = secrets.token_hex(16)

    def run(self, sql: str, params: Any) -> Outcome:
        return self.run_many([(sql, params)])[0]

    def run_many(self, statements: Statements) -> list[Outcome]:
        """Statements in one request; inside a transaction each is logged (an error too: the
        caller may carry on after it). The first error stops the rest and is raised."""
        if self._log is None:
            return self.read(statements)
        backoff = self._backoff()
        pending = list(statements)
        done: list[Outcome] = []
        while pending:
            lead = [] if self._begun else [_BEGIN]
            try:
                [response] = self._send(self._stream, [chained(lead + pending)], backoff)
            except TransportError as exc:
                backoff.wait(exc)
                self._restart(backoff)
                continue
            steps = _response_steps(response)
            if lead:
                begin = steps.pop(0)
                if isinstance(begin, StepError):
                    if not begin.busy:
                        raise SqlError(str(begin))
                    backoff.wait(str(begin))
                    continue
                self._begun = True
            ran = 0
            for (sql, params), step in zip(pending, steps, strict=True):
                if isinstance(step, StepError):
                    if step.rolled_back:  # the server rolled the transaction back: replay it
                        backoff.wait(str(step))
                        self.rollback_stream()
                        self._restart(backoff)
                        break
                    if step.busy:
                        backoff.wait(str(step))
                        break
                    self._log.append(Step(sql, params, Outcome(None, [], 0, error=str(step))))
                    raise SqlError(str(step))
                assert isinstance(step, Outcome)
                self._log.append(Step(sql, params, step))
                done.append(step)
                ran += 1
            pending = pending[ran:]
        return done

    def _replay(self, backoff: Backoff, *, begin: bool) -> bool:
        """Run the log again on the current stream (after BEGIN when ``begin``), in one
        request; False when it must be tried again (busy, or the request failed)."""
        log = self._log or []
        steps_in = ([_BEGIN] if begin else []) + [(s.sql, s.params) for s in log]
        if not steps_in:
            return True
        request = chained(steps_in)
        for index, step in enumerate(request["batch"]["steps"]):  # run on past errors
            if index:
                step["condition"] = {"type": "ok", "step": 0} if begin else None
        try:
            [response] = self._send(self._stream, [request], backoff)
        except TransportError as exc:
            backoff.wait(exc)
            self._stream = Stream()
            return False
        steps = _response_steps(response)
        if begin:
            first = steps.pop(0)
            if isinstance(first, StepError):
                backoff.wait(str(first))
                return False
        for logged, step in zip(log, steps, strict=True):
            if isinstance(step, StepError) and step.busy:
                backoff.wait(str(step))
                self.rollback_stream()
                return False
            outcome = step if isinstance(step, Outcome) else Outcome(None, [], 0, error=str(step))
            if not outcome.same_as(logged.outcome):
                self.rollback_stream()
                raise Diverged(f"replaying {logged.sql.split(None, 1)[0]} gave another result")
        return True

    def _restart(self, backoff: Backoff) -> None:
        """The transaction's stream is gone (or its last answer): begin again on a new stream
        and replay what was logged. Before anything began there is nothing to replay."""
        self._stream = Stream()
        if not self._begun:
            return
        self.counters["replays"] += 1
        while not self._replay(backoff, begin=True):
            self._stream = Stream()

    def _committed(self, backoff: Backoff) -> bool:
        """After a lost answer to COMMIT: hold the write lock on a new stream, so the old
        transaction is settled, then look for its marker. Leaves the log replayed in an open
        transaction when the answer is no (the caller commits it)."""
        look: Statements = [_BEGIN, (f"SELECT 1 FROM {COMMITS_TABLE} WHERE id = ?",
                                     (self._marker,))]
        def fresh() -> Stream:
            self._stream = Stream()
            return self._stream

        while True:
            found = self._look_up(look, fresh, backoff)
            if found.rows:
                self.rollback_stream()
                return True
            if self._replay(backoff, begin=False):
                return False

    def commit(self) -> None:
        """Send the marker and COMMIT together. A lost answer is resolved through the marker:
        found, it committed; not found (once the old transaction can no longer commit), the
        log is replayed on a new stream and committed there."""
        try:
            if not self._begun:
                return  # nothing was sent: nothing to commit
            backoff = self._backoff()
            statements = [*self._marker_statements(self._marker), _COMMIT]
            while True:
                try:
                    [response] = self._send(self._stream, [chained(statements)], backoff,
                                            close=True)
                except TransportError as exc:
                    backoff.wait(exc)
                    if exc.failure is Failure.STREAM_LOST:  # it did not run: replay, commit
                        self._restart(backoff)
                        continue
                    self.counters["lost_commits"] += 1
                    if self._committed(backoff):
                        self.counters["found_commits"] += 1
                        return
                    continue
                failed = next((s for s in _response_steps(response)
                               if isinstance(s, StepError)), None)
                if failed is None:
                    return
                if not failed.busy:
                    raise SqlError(str(failed))
                backoff.wait(str(failed))  # closing the stream rolled it back: again
                self._restart_after_close(backoff)
        finally:
            self._log = None
            self._begun = False
            self._stream = Stream()

    def _restart_after_close(self, backoff: Backoff) -> None:
        self._stream = Stream()
        while not self._replay(backoff, begin=True):
            self._stream = Stream()

    def rollback_stream(self) -> None:
        """Roll back and close the current stream, best effort (an orphaned stream's
        transaction is rolled back by the server when the stream expires)."""
        stream, self._stream = self._stream, Stream()
        if not stream.open:
            return
        with contextlib.suppress(TransportError):
            self._client.pipeline(stream, [{"type": "execute", "stmt": {"sql": "ROLLBACK;"}}],
                                  close=True)

    def rollback(self) -> None:
        self._log = None
        self._begun = False
        self.rollback_stream()

    def close(self) -> None:
        self.rollback_stream()
        self._client.close()


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
