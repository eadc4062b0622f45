"""Hrana 3 stream semantics (spec: ../shared/specs/HRANA_3_SPEC.md), independent of HTTP.

A ``Stream`` is one SQLite connection executing stream requests (``execute``, ``batch``,
``sequence``, ``describe``, ``store_sql``, ``close_sql``, ``get_autocommit``, ``close``) and
cursor batches. ``Streams`` hands out signed batons: each response carries a new one, and a
baton that was already used, forged, or names a closed or expired stream is refused.

Errors follow sqld (tursodatabase/libsql, ``libsql-server/src/hrana/``): a ``ProtocolError``
(``mod.rs``: a refused baton, an unknown request type, a bad SQL id or batch condition, a body
that is not JSON) fails the whole HTTP request with 400 ``text/plain`` and the error's text
(``http/mod.rs`` ``protocol_error_response``); an expired stream is 400 JSON ``{"message",
"code": "STREAM_EXPIRED"}`` (``stream_error_response``); a statement's error (``StmtError``,
``stmt.rs``: SQLite's, ``ARGS_INVALID``, ``TRANSACTION_TIMEOUT``) is an error result of its
request or step, and the pipeline goes on.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.fakes.hrana_sqlite import Connection, Result, SqliteError, Value

Json = dict[str, Any]


class ProtocolError(Exception):
    """The client broke the protocol (bad baton, malformed request): the whole HTTP request
    fails with 400 and the message as ``text/plain`` (``code`` only names it in the stats);
    ``json=True`` for sqld's ``StreamError`` (an expired stream), sent as JSON."""

    def __init__(self, message: str, code: str, status: int = 400, *, json: bool = False):
        super().__init__(message)
        self.message, self.code, self.status, self.json = message, code, status, json

    def body(self) -> Json:
        return {"message": self.message, "code": self.code}


class StmtError(Exception):
    """A statement's error that is not SQLite's (sqld ``stmt.rs`` ``StmtError``): an error
    result, the pipeline goes on."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.message, self.code = message, code


TIMED_OUT = StmtError("Transaction timed out", "TRANSACTION_TIMEOUT")
BATON_INVALID = "Received an invalid baton"
BATON_REUSED = "Received a baton that has already been used"
BATON_CLOSED = "Stream for this baton was closed"


def error_json(exc: Exception) -> Json:
    if isinstance(exc, SqliteError | StmtError):
        return {"message": exc.message, "code": exc.code}
    return {"message": str(exc), "code": "INTERNAL"}


def decode_value(value: Json) -> Value:
    kind = value.get("type")
    if kind == "null":
        return None
    if kind == "integer":
        return int(value["value"])
    if kind == "float":
        return float(value["value"])
    if kind == "text":
        return str(value["value"])
    if kind == "blob":
        data = value.get("base64", "")
        return base64.b64decode(data + "=" * (-len(data) % 4))
    raise ProtocolError("Value type not recognized", "VALUE_INVALID")


def encode_value(value: Value) -> Json:
    if value is None:
        return {"type": "null"}
    if isinstance(value, int):
        return {"type": "integer", "value": str(value)}
    if isinstance(value, float):
        return {"type": "float", "value": value}
    if isinstance(value, str):
        return {"type": "text", "value": value}
    return {"type": "blob", "base64": base64.b64encode(value).decode()}


def _cols(cols: list) -> list[Json]:
    return [{"name": c.name, "decltype": c.decltype} for c in cols]


def result_json(result: Result, elapsed_ms: float) -> Json:
    rowid = result.last_insert_rowid
    return {
        "cols": _cols(result.cols),
        "rows": [[encode_value(v) for v in row] for row in result.rows],
        "affected_row_count": result.affected_row_count,
        "last_insert_rowid": None if rowid is None else str(rowid),
        "rows_read": len(result.rows),
        "rows_written": result.affected_row_count,
        "query_duration_ms": elapsed_ms,
    }


class Stream:
    def __init__(self, stream_id: int, database: str, conn: Connection,
                 on_statement: Callable[[], None]):
        self.id = stream_id
        self.database = database
        self.conn = conn
        self.seq = 0
        self.last_used = time.monotonic()
        self.in_use = False
        self.forced_rollback = False  # sqld connection_core: the next program times out
        self._sql: dict[int, str] = {}
        self._on_statement = on_statement

    def close(self) -> None:
        self.conn.close()

    # -- SQL texts --------------------------------------------------------------------------
    def _text(self, holder: Json) -> str:
        sql, sql_id = holder.get("sql"), holder.get("sql_id")
        if (sql is None) == (sql_id is None):
            raise ProtocolError("Either `sql` or `sql_id` are required, but not both",
                                "SQL_ID_OR_SQL")
        if sql is not None:
            return str(sql)
        if sql_id not in self._sql:
            raise ProtocolError(f"SQL text {sql_id} not found", "SQL_NOT_FOUND")
        return self._sql[sql_id]

    # -- statements -------------------------------------------------------------------------
    def _run(self, stmt: Json) -> Result:
        args = [decode_value(v) for v in stmt.get("args") or []]
        named = [(a["name"], decode_value(a["value"])) for a in stmt.get("named_args") or []]
        want_rows = stmt.get("want_rows", True) is not False
        with self.conn.single(self._text(stmt)) as statement:
            count = statement.param_count
            if len(args) > count:
                raise StmtError(f"Arguments do not match SQL parameters: {len(args)} given, "
                                f"the statement takes {count}", "ARGS_INVALID")
            bound = set(range(1, len(args) + 1))
            for index, value in enumerate(args, start=1):
                statement.bind(index, value)
            for name, value in named:
                candidates = [name] if name[:1] in ":@$?" else [f":{name}", f"@{name}", f"${name}"]
                index = next((i for c in candidates if (i := statement.param_index(c))), 0)
                if not index:
                    raise StmtError(f"Arguments do not match SQL parameters: no parameter "
                                    f"named {name!r}", "ARGS_INVALID")
                statement.bind(index, value)
                bound.add(index)
            missing = set(range(1, count + 1)) - bound
            if missing:
                raise StmtError(f"Arguments do not match SQL parameters: no value given for "
                                f"parameter(s) {sorted(missing)}", "ARGS_INVALID")
            self._on_statement()
            return statement.run(want_rows=want_rows)

    def execute(self, stmt: Json) -> Json:
        started = time.perf_counter()
        result = self._run(stmt)
        return result_json(result, (time.perf_counter() - started) * 1000)

    def _condition(self, cond: Json | None, outcomes: list[bool | None], step: int) -> bool:
        if cond is None:
            return True
        kind = cond.get("type")
        if kind in ("ok", "error"):
            ref = cond.get("step")
            if not isinstance(ref, int) or not 0 <= ref < step:
                raise ProtocolError("Invalid reference to step in a batch condition",
                                    "BATCH_COND")
            return outcomes[ref] is (kind == "ok")
        if kind == "not":
            return not self._condition(cond.get("cond"), outcomes, step)
        if kind == "and":
            return all(self._condition(c, outcomes, step) for c in cond.get("conds") or [])
        if kind == "or":
            return any(self._condition(c, outcomes, step) for c in cond.get("conds") or [])
        if kind == "is_autocommit":
            return self.conn.is_autocommit
        raise ProtocolError("BatchCond type not recognized", "BATCH_COND")

    def run_batch(self, batch: Json, emit: Callable[[int, Json | None, Json | None], None]):
        """Run the steps in order; ``emit(step, result, error)`` for each executed step.
        ``outcomes[i]``: True ran fine, False failed, None skipped."""
        steps = batch.get("steps")
        if not isinstance(steps, list):
            raise ProtocolError("Cannot deserialize client message from JSON: `steps` must be "
                                "a list", "BATCH_INVALID")
        outcomes: list[bool | None] = []
        timed_out, self.forced_rollback = self.forced_rollback, False
        for index, step in enumerate(steps):
            if timed_out:  # connection_core.rs: every step of the program fails
                outcomes.append(False)
                emit(index, None, error_json(TIMED_OUT))
                continue
            if not self._condition(step.get("condition"), outcomes, index):
                outcomes.append(None)
                continue
            try:
                result = self.execute(step["stmt"])
            except (SqliteError, StmtError) as exc:
                outcomes.append(False)
                emit(index, None, error_json(exc))
            else:
                outcomes.append(True)
                emit(index, result, None)

    def batch(self, batch: Json) -> Json:
        size = len(batch.get("steps") or [])
        results: list[Json | None] = [None] * size
        errors: list[Json | None] = [None] * size

        def emit(index: int, result: Json | None, error: Json | None) -> None:
            results[index], errors[index] = result, error

        self.run_batch(batch, emit)
        return {"step_results": results, "step_errors": errors}

    def cursor_entries(self, batch: Json) -> list[Json]:
        entries: list[Json] = []

        def emit(index: int, result: Json | None, error: Json | None) -> None:
            if error is not None:
                entries.append({"type": "step_error", "step": index, "error": error})
                return
            assert result is not None
            entries.append({"type": "step_begin", "step": index, "cols": result["cols"]})
            entries.extend({"type": "row", "row": row} for row in result["rows"])
            entries.append({"type": "step_end", "affected_row_count": result["affected_row_count"],
                            "last_insert_rowid": result["last_insert_rowid"]})

        self.run_batch(batch, emit)
        return entries

    def sequence(self, holder: Json) -> None:
        for statement in self.conn.statements(self._text(holder)):
            self._on_statement()
            statement.run(want_rows=False)

    def describe(self, holder: Json) -> Json:
        with self.conn.single(self._text(holder)) as statement:
            found = statement.describe()
        return {
            "params": [{"name": name} for name in found.params],
            "cols": [{"name": c.name or "", "decltype": c.decltype} for c in found.cols],
            "is_explain": found.is_explain, "is_readonly": found.is_readonly,
        }

    def handle(self, req: Json) -> Json:
        """One stream request (not ``close``, which the pipeline handles)."""
        kind = req["type"]
        if kind == "execute":
            if self.forced_rollback:
                self.forced_rollback = False
                raise TIMED_OUT
            return {"type": "execute", "result": self.execute(req["stmt"])}
        if kind == "batch":
            return {"type": "batch", "result": self.batch(req["batch"])}
        if kind == "sequence":
            self.sequence(req)
            return {"type": "sequence"}
        if kind == "describe":
            return {"type": "describe", "result": self.describe(req)}
        if kind == "store_sql":
            sql_id = req["sql_id"]  # required, like ``sql``
            if sql_id in self._sql:
                raise ProtocolError(f"SQL text {sql_id} already exists", "SQL_EXISTS")
            self._sql[int(sql_id)] = str(req["sql"])
            return {"type": "store_sql"}
        if kind == "close_sql":
            sql_id = req.get("sql_id")
            if sql_id is not None:
                self._sql.pop(sql_id, None)
            return {"type": "close_sql"}
        if kind == "get_autocommit":
            return {"type": "get_autocommit", "is_autocommit": self.conn.is_autocommit}
        raise ProtocolError("StreamRequest type not recognized", "REQUEST_INVALID")

    def force_rollback(self) -> None:
        """sqld's answer to a write transaction held too long while another connection waits
        for the lock (``connection_manager.rs``, ``connection_core.rs``): roll it back now and
        fail the stream's next program with ``TRANSACTION_TIMEOUT``."""
        if not self.conn.is_autocommit:
            for statement in self.conn.statements("ROLLBACK"):
                statement.run()
            self.forced_rollback = True


REQUEST_TYPES = {"close", "execute", "batch", "sequence", "describe", "store_sql", "close_sql",
                 "get_autocommit"}
_CLOSED, _EXPIRED = "closed", "expired"


class Streams:
    """The open streams, their batons and their expiry."""

    def __init__(self, open_conn: Callable[[str], Connection], *, ttl: float,
                 on_statement: Callable[[], None],
                 retire_conn: Callable[[str, Connection], None] | None = None):
        self._open_conn = open_conn
        self._retire_conn = retire_conn or (lambda _database, conn: conn.close())
        self._ttl = ttl
        self._on_statement = on_statement
        self._key = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self._streams: dict[int, Stream | str] = {}
        self._next_id = 1
        self.opened = 0
        self.expired = 0

    def _sign(self, stream_id: int, seq: int) -> str:
        payload = f"{stream_id}.{seq}".encode()
        mac = hmac.new(self._key, payload, hashlib.sha256).digest()[:16]
        return base64.urlsafe_b64encode(payload + b"." + mac).decode().rstrip("=")

    def _parse(self, baton: str) -> tuple[int, int]:
        try:
            raw = base64.urlsafe_b64decode(baton + "=" * (-len(baton) % 4))
            payload, mac = raw[:-17], raw[-16:]  # the MAC is 16 raw bytes after a "."
            expected = hmac.new(self._key, payload, hashlib.sha256).digest()[:16]
            if not hmac.compare_digest(mac, expected):
                raise ValueError("bad signature")
            stream_id, seq = (int(part) for part in payload.split(b"."))
        except (ValueError, TypeError) as exc:
            raise ProtocolError(BATON_INVALID, "BATON_INVALID") from exc
        return stream_id, seq

    def acquire(self, baton: str | None, database: str) -> Stream:
        """The stream a request on ``database`` runs on (a new one for a null baton), marked
        in use."""
        if baton is None:
            conn = self._open_conn(database)
            with self._lock:
                stream = Stream(self._next_id, database, conn, self._on_statement)
                self._next_id += 1
                self._streams[stream.id] = stream
                stream.in_use = True
                self.opened += 1
            return stream
        stream_id, seq = self._parse(str(baton))
        with self._lock:
            found = self._streams.get(stream_id)
            # stream.rs acquire: a closed stream's handle is gone, so its baton is invalid
            if found in (None, _CLOSED) or (
                    isinstance(found, Stream) and found.database != database):
                raise ProtocolError(BATON_INVALID, "BATON_INVALID")
            if found == _EXPIRED:
                raise ProtocolError("The stream has expired due to inactivity",
                                    "STREAM_EXPIRED", json=True)
            assert isinstance(found, Stream)
            if found.in_use or seq != found.seq:
                raise ProtocolError(BATON_REUSED, "BATON_REUSED")
            found.in_use = True
            return found

    def release(self, stream: Stream, *, closed: bool) -> str | None:
        """Finish a request on ``stream``; returns the next baton (None once closed)."""
        with self._lock:
            stream.in_use = False
            stream.last_used = time.monotonic()
            if closed:
                self._streams[stream.id] = _CLOSED
            else:
                stream.seq += 1
                return self._sign(stream.id, stream.seq)
        self._retire_conn(stream.database, stream.conn)
        return None

    def expire_idle(self) -> int:
        """Roll back and close streams idle for longer than the ttl."""
        now = time.monotonic()
        stale: list[Stream] = []
        with self._lock:
            for key, stream in self._streams.items():
                if isinstance(stream, Stream) and not stream.in_use and (
                    now - stream.last_used > self._ttl
                ):
                    stale.append(stream)
                    self._streams[key] = _EXPIRED
            self.expired += len(stale)
        for stream in stale:
            self._retire_conn(stream.database, stream.conn)  # an open transaction rolls back
        return len(stale)

    def forget_all(self) -> int:
        """A server restart or failover: every stream is gone (its transaction rolled back),
        so every baton handed out so far is refused as invalid."""
        with self._lock:
            streams = [s for s in self._streams.values()
                       if isinstance(s, Stream) and not s.in_use]
            for stream in streams:
                del self._streams[stream.id]
        for stream in streams:
            stream.close()
        return len(streams)

    def open_count(self) -> int:
        with self._lock:
            return sum(isinstance(s, Stream) for s in self._streams.values())

    def close_all(self) -> None:
        with self._lock:
            streams = [s for s in self._streams.values() if isinstance(s, Stream)]
            self._streams.clear()
        for stream in streams:
            stream.close()


def _validate(requests: Any) -> list[Json]:
    if not isinstance(requests, list):
        raise ProtocolError("Cannot deserialize client message from JSON: `requests` must be "
                            "a list", "REQUEST_INVALID")
    for req in requests:
        if not isinstance(req, dict) or req.get("type") not in REQUEST_TYPES:
            raise ProtocolError("StreamRequest type not recognized", "REQUEST_INVALID")
    return requests


def run_pipeline(streams: Streams, database: str, body: Json, *,
                 time_out: bool = False) -> Json:
    """``POST /v3/pipeline``: every request runs, in order, even after one fails (a statement's
    error); a protocol error, even after requests ran, fails the whole HTTP request. With
    ``time_out`` the stream's transaction is force-rolled back first (``force_rollback``)."""
    requests = _validate(body.get("requests"))
    stream = streams.acquire(body.get("baton"), database)
    if time_out:
        stream.force_rollback()
    results: list[Json] = []
    closed = False
    try:
        for req in requests:
            if closed:  # request.rs: get_db() on a closed stream
                raise ProtocolError(BATON_CLOSED, "BATON_STREAM_CLOSED")
            if req["type"] == "close":
                closed = True
                results.append({"type": "ok", "response": {"type": "close"}})
            else:
                try:
                    results.append({"type": "ok", "response": stream.handle(req)})
                except (SqliteError, StmtError) as exc:
                    results.append({"type": "error", "error": error_json(exc)})
    finally:
        baton = streams.release(stream, closed=closed)
    return {"baton": baton, "base_url": None, "results": results}


def run_cursor(streams: Streams, database: str, body: Json) -> list[Json]:
    """``POST /v3/cursor``: the ``CursorRespBody`` line, then the batch's cursor entries."""
    batch = body.get("batch")
    if not isinstance(batch, dict):
        raise ProtocolError("Cannot deserialize client message from JSON: missing field "
                            "`batch`", "BATCH_INVALID")
    stream = streams.acquire(body.get("baton"), database)
    try:
        entries = stream.cursor_entries(batch)
    finally:
        baton = streams.release(stream, closed=False)
    return [{"baton": baton, "base_url": None}, *entries]
