"""A Hrana 3 over HTTP server backed by SQLite, for tests and benchmarks (JSON encoding only).

Run it as its own process (the ``libsql`` client holds the GIL while it waits for an answer, so a
server in a thread of the client's process would never be scheduled)::

    python -m tests.fakes.hrana_server --port 0 --db /tmp/iris.db --token secret

It prints ``hrana listening on http://127.0.0.1:PORT`` once it accepts connections. The Hrana
endpoints (``GET /v3``, ``POST /v3/pipeline``, ``POST /v3/cursor``) serve ``--db``; with
``--dir DIR``, ``/db/NAME/v3/...`` serve ``DIR/NAME.db`` (a fresh database per test, one server:
point the client at ``http://127.0.0.1:PORT/db/NAME``). Besides them it serves, without
authentication, ``GET /_fake/stats`` (round trips, statements, streams, faults injected),
``POST /_fake/reset`` (zero the counters) and ``POST /_fake/faults`` (a ``Faults`` as JSON):
answer some requests with 503/502/429 before running them, drop the connection before or after
running them, hang, forget every stream (a restart), time a transaction out, or add a fixed delay
to every request. ``tests/fakes/hrana.py`` drives it.

Its answers follow sqld's (tursodatabase/libsql ``libsql-server/src/hrana/http/mod.rs`` for the
Hrana errors, ``libsql-server/src/error.rs`` ``ResponseError::format_err`` for the others):
a protocol error (a refused baton, a body that is not JSON: NaN included) is 400 ``text/plain``
with the error's text; an expired stream 400 JSON ``{"message", "code"}``; a bad token 401 JSON
``{"error": "Unauthorized: ..."}``; an unknown path 404 with no body; ``GET /v3`` a text hello.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from tests.fakes.hrana_protocol import ProtocolError, Streams, run_cursor, run_pipeline
from tests.fakes.hrana_sqlite import Connection

FaultKind = Literal["fail", "drop_before", "drop_after", "hang", "restart", "tx_timeout"]
_NAMESPACED = re.compile(r"/db/([A-Za-z0-9_-]{1,64})(/.*)?")


@dataclass
class FaultRule:
    """``kind`` happens to a ``rate`` of the Hrana requests whose body contains ``match``, at
    most ``times`` times. ``fail``: answer ``status`` without running anything (the baton stays
    valid); ``drop_before``/``drop_after``: close the connection without an answer, before or
    after running the request; ``hang``: wait ``seconds`` before running it; ``restart``: forget
    every stream first (sqld restarted or failed over: their transactions are rolled back and
    their batons refused as invalid); ``tx_timeout``: roll back the request's stream's open
    transaction first and fail its statements with ``TRANSACTION_TIMEOUT`` (sqld does so to a
    write transaction held over 5 s while another connection waits for the lock)."""

    kind: FaultKind
    rate: float = 1.0
    times: int | None = None
    match: str | None = None
    status: int = 503
    seconds: float = 0.0


@dataclass
class Faults:
    rules: list[FaultRule] = field(default_factory=list)
    delay: float = 0.0  # added to every Hrana request
    seed: int = 0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Faults:
        rules = [FaultRule(**rule) for rule in data.get("rules", [])]
        return cls(rules=rules, delay=float(data.get("delay", 0.0)),
                   seed=int(data.get("seed", 0)))


class Stats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.counts: dict[str, int] = {}

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + n

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counts)


class HranaServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, db_path: str | None, token: str | None, *,
                 db_dir: str | None = None, stream_ttl: float = 10.0, busy_timeout: float = 5.0,
                 log_path: str | None = None):
        super().__init__(("127.0.0.1", port), _Handler)
        self.db_path = db_path
        self.db_dir = Path(db_dir) if db_dir else None
        self._log = open(log_path, "a", buffering=1) if log_path else None  # noqa: SIM115
        self.token = token
        self.stats = Stats()
        self._faults = Faults()
        self._faults_lock = threading.Lock()
        self._random = random.Random(0)
        self._busy_ms = int(busy_timeout * 1000)
        self._ready: set[str] = set()
        self._pool: dict[str, list[Connection]] = {}
        self._ready_lock = threading.Lock()
        self.streams = Streams(self._open, ttl=stream_ttl, retire_conn=self._retire,
                               on_statement=lambda: self.stats.add("statements"))
        self._reaper = threading.Thread(target=self._reap, daemon=True, name="hrana-expiry")
        self._reaper.start()

    def _open(self, database: str) -> Connection:
        """A connection for a new stream: a pooled one (it keeps its parsed schema) or new."""
        with self._ready_lock:
            pooled = self._pool.get(database)
            if pooled:
                return pooled.pop()
            if database not in self._ready:  # WAL once per file, as sqld does
                setup = Connection(database, busy_timeout_ms=self._busy_ms)
                for statement in setup.statements("PRAGMA journal_mode=WAL"):
                    statement.run()
                setup.close()
                self._ready.add(database)
        conn = Connection(database, busy_timeout_ms=self._busy_ms)
        for statement in conn.statements("PRAGMA synchronous=NORMAL"):
            statement.run()
        return conn

    def _retire(self, database: str, conn: Connection) -> None:
        """A closed or expired stream's connection: pooled when it holds no transaction (an
        expired stream's open transaction is rolled back by closing its connection)."""
        if conn.is_autocommit:
            with self._ready_lock:
                pool = self._pool.setdefault(database, [])
                if len(pool) < 8:
                    pool.append(conn)
                    return
        conn.close()

    def close_pool(self) -> None:
        with self._ready_lock:
            pools, self._pool = list(self._pool.values()), {}
        for pool in pools:
            for conn in pool:
                conn.close()

    def database_for(self, path: str) -> tuple[str, str] | None:
        """(database file, Hrana path) for a request path, or None when nothing serves it."""
        match = _NAMESPACED.fullmatch(path)
        if match and self.db_dir is not None:
            return str(self.db_dir / f"{match.group(1)}.db"), match.group(2) or ""
        if self.db_path is not None and not path.startswith("/db/"):
            return self.db_path, path
        return None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def _reap(self) -> None:
        while True:
            time.sleep(0.25)
            self.streams.expire_idle()

    def log(self, line: str) -> None:
        if self._log is not None:
            self._log.write(line + "\n")

    def set_faults(self, faults: Faults) -> None:
        with self._faults_lock:
            self._faults = faults
            self._random = random.Random(faults.seed)

    def faults_json(self) -> dict[str, Any]:
        with self._faults_lock:
            return asdict(self._faults)

    def pick_faults(self, body: bytes) -> tuple[float, list[FaultRule]]:
        """The fixed delay and the rules that fire for this request, in order, up to the first
        that ends it (each spends one use)."""
        text = body.decode("utf-8", "replace")
        fired = []
        with self._faults_lock:
            for rule in self._faults.rules:
                if rule.times is not None and rule.times <= 0:
                    continue
                if rule.match is not None and rule.match not in text:
                    continue
                if self._random.random() >= rule.rate:
                    continue
                if rule.times is not None:
                    rule.times -= 1
                fired.append(rule)
                if rule.kind in ("fail", "drop_before"):  # the request ends here
                    break
            return self._faults.delay, fired


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes
    server: HranaServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), headers=headers)

    def _not_found(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        """sqld's errors outside Hrana (``error.rs`` ``format_err``): JSON ``{"error"}``."""
        self._json(status, {"error": message}, headers)

    def _drop(self) -> None:
        self.close_connection = True

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self) -> None:
        path = self.path.split("?")[0].rstrip("/")
        found = self.server.database_for(path)
        if found is not None:
            path = found[1]
        if path == "/_fake/stats":
            stats = self.server.stats.snapshot()
            stats["open_streams"] = self.server.streams.open_count()
            stats["streams_opened"] = self.server.streams.opened
            stats["streams_expired"] = self.server.streams.expired
            self._json(200, stats)
        elif path == "/_fake/faults":
            self._json(200, self.server.faults_json())
        elif path == "/v3":
            self._send(200, b"Hello, this is HTTP API v2 (Hrana over HTTP)", "text/plain")
        else:  # /v3-protobuf included: this server speaks JSON only
            self._not_found()

    def do_POST(self) -> None:
        path = self.path.split("?")[0].rstrip("/")
        body = self._body()
        found = self.server.database_for(path)
        if path.startswith("/_fake/"):
            self._control(path, body)
        elif found is not None and found[1] in ("/v3/pipeline", "/v3/cursor"):
            self._hrana(found[0], found[1], body)
        else:
            self._not_found()

    def _control(self, path: str, body: bytes) -> None:
        if path == "/_fake/reset":
            self.server.stats.reset()
            self._json(200, {})
        elif path == "/_fake/faults":
            self.server.set_faults(Faults.from_json(json.loads(body or b"{}")))
            self._json(200, self.server.faults_json())
        else:
            self._not_found()

    def _unauthorized(self) -> str | None:
        """Why the request is refused (sqld ``auth/errors.rs``), or None."""
        token = self.server.token
        given = self.headers.get("Authorization")
        if not token or given == f"Bearer {token}":
            return None
        if given is None:
            return "Authentication is required but no JWT was specified"
        return "The JWT is invalid"

    def _hrana(self, database: str, path: str, body: bytes) -> None:
        stats = self.server.stats
        stats.add("round_trips")
        self.server.log(f"{path} {body.decode('utf-8', 'replace')}")
        refused = self._unauthorized()
        if refused is not None:
            stats.add("unauthorized")
            self._error(401, f"Unauthorized: `{refused}`")
            return
        delay, fired = self.server.pick_faults(body)
        if delay:
            time.sleep(delay)
        after = None
        time_out = False
        for rule in fired:
            stats.add(f"fault_{rule.kind}")
            if rule.kind == "hang":
                time.sleep(rule.seconds)
            elif rule.kind == "fail":
                headers = {"Retry-After": "0"} if rule.status == 429 else None
                self._error(rule.status, f"injected fault: HTTP {rule.status}", headers)
                return
            elif rule.kind == "drop_before":
                self._drop()
                return
            elif rule.kind == "restart":
                self.server.streams.forget_all()
            elif rule.kind == "tx_timeout":
                time_out = True
            else:
                after = rule
        try:
            request = _parse(body)
            if path == "/v3/pipeline":
                stats.add("pipelines")
                out = json.dumps(run_pipeline(self.server.streams, database, request,
                                              time_out=time_out)).encode()
                content_type = "application/json"
            else:
                stats.add("cursors")
                lines = run_cursor(self.server.streams, database, request)
                out = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
                content_type = "text/plain"
        except ProtocolError as exc:
            stats.add(f"error_{exc.code}")
            if exc.json:  # http/mod.rs stream_error_response
                self._json(exc.status, exc.body())
            else:  # http/mod.rs protocol_error_response
                self._send(exc.status, exc.message.encode(), "text/plain")
            return
        if after is not None:
            self._drop()
            return
        self._send(200, out, content_type)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _parse(body: bytes) -> dict[str, Any]:
    """The request body as sqld's serde_json reads it: NaN and Infinity are not JSON."""
    try:
        request = json.loads(body, parse_constant=_reject_constant)
    except ValueError as exc:
        raise ProtocolError(f"Cannot deserialize client message from JSON: {exc}",
                            "REQUEST_INVALID") from None
    if not isinstance(request, dict):
        raise ProtocolError("Cannot deserialize client message from JSON: invalid type, "
                            "expected struct", "REQUEST_INVALID")
    return request


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--db", default=None, help="the SQLite file served at /v3")
    parser.add_argument("--dir", default=None, help="serve DIR/NAME.db at /db/NAME/v3")
    parser.add_argument("--token", default=None, help="the bearer token clients must send")
    parser.add_argument("--stream-ttl", type=float, default=10.0,
                        help="seconds an idle stream lives (sqld: 10)")
    parser.add_argument("--busy-timeout", type=float, default=5.0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds added to each request")
    parser.add_argument("--log", default=None, help="append every request body to this file")
    args = parser.parse_args(argv)
    if not args.db and not args.dir:
        parser.error("give --db, --dir or both")
    server = HranaServer(args.port, args.db, args.token, db_dir=args.dir,
                         stream_ttl=args.stream_ttl, busy_timeout=args.busy_timeout,
                         log_path=args.log)
    if args.delay:
        server.set_faults(Faults(delay=args.delay))
    print(f"hrana listening on {server.url}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.streams.close_all()
        server.close_pool()


if __name__ == "__main__":
    main(sys.argv[1:])
