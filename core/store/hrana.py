"""A small Hrana 3 over HTTP client (JSON encoding): what Iris needs to talk to Turso/sqld.

The ``libsql`` client's remote mode sends a ``describe`` before every statement and one
statement per request. This client sends a whole pipeline in one HTTP request: a batch of
statements chained by conditions (each runs only if the one before it succeeded), on a stream
that lives across requests through its baton (a transaction) or is closed in the same request
(a read, or a write that is its own transaction).

Transport failures are classified by what sqld (``libsql-server/src/hrana/http/mod.rs``) really
sends, HTTP status and content type first, the JSON error code when there is one:

- ``NOT_EXECUTED``: HTTP 429/502/503, a refused connection: nothing ran, send it again;
- ``STREAM_LOST``: the stream expired (400, JSON, ``STREAM_EXPIRED``) or its baton was refused
  (400, ``text/plain``, "Received an invalid baton" / "... already been used": a server restart,
  a failover, a stream cleaned up): nothing ran, but the stream (and its open transaction) is
  gone;
- ``UNKNOWN``: the connection dropped after the request was sent, HTTP 500/504, a timeout, a
  stream closed earlier in the same pipeline: it may or may not have run;
- ``FATAL``: anything else (a bad token, a malformed request): reported, never retried.

A step error ``TRANSACTION_TIMEOUT`` (sqld rolled back a write transaction held longer than 5 s
while another connection waited for the lock) or ``TRANSACTION_BUSY`` is retried like
``SQLITE_BUSY``; the transaction it interrupted is replayed (``StepError.rolled_back``).
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import time
from dataclasses import dataclass
from enum import Enum
from typing import Any

from core.store.hrana_http import Connections, NotSent, Unanswered


class Failure(Enum):
    NOT_EXECUTED = "not executed"
    STREAM_LOST = "stream lost"
    UNKNOWN = "outcome unknown"
    FATAL = "fatal"


STREAM_CODES = {"STREAM_EXPIRED", "BATON_INVALID", "BATON_REUSED", "BATON_STREAM_CLOSED",
                "STREAM_CLOSED"}
ROLLED_BACK_CODES = ("TRANSACTION_TIMEOUT", "TRANSACTION_BUSY")
BUSY_CODES = ("SQLITE_BUSY", "SQLITE_LOCKED", *ROLLED_BACK_CODES)


class TransportError(Exception):
    """A request did not give an answer; ``failure`` says whether it may have run."""

    def __init__(self, message: str, failure: Failure):
        super().__init__(message)
        self.failure = failure


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
class StepError:
    code: str
    message: str

    @property
    def busy(self) -> bool:
        return self.code.startswith(BUSY_CODES)

    @property
    def rolled_back(self) -> bool:
        """The server ended the stream's transaction: what ran in it is gone."""
        return self.code in ROLLED_BACK_CODES

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


Step = Outcome | StepError | None  # None: skipped (an earlier step failed)


def encode(value: Any) -> dict[str, Any]:
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool | int):
        return {"type": "integer", "value": str(int(value))}
    if isinstance(value, float):
        if not math.isfinite(value):  # JSON has no NaN/Infinity; sqld would refuse the body
            raise ValueError(f"cannot store the float {value!r} in the database (only finite "
                             "numbers can be sent)")
        return {"type": "float", "value": value}
    if isinstance(value, str):
        return {"type": "text", "value": value}
    if isinstance(value, bytes | bytearray | memoryview):
        return {"type": "blob", "base64": base64.b64encode(bytes(value)).decode()}
    raise TypeError(f"cannot send a {type(value).__name__} to the database")


def decode(value: dict[str, Any]) -> Any:
    kind = value.get("type")
    if kind == "integer":
        return int(value["value"])
    if kind == "float":
        return float(value["value"])
    if kind == "text":
        return value["value"]
    if kind == "blob":
        data = value.get("base64", "")
        return base64.b64decode(data + "=" * (-len(data) % 4))
    return None


def statement(sql: str, params: Any) -> dict[str, Any]:
    stmt: dict[str, Any] = {"sql": sql.rstrip().rstrip(";") + ";", "want_rows": True}
    if isinstance(params, dict):
        stmt["named_args"] = [{"name": k, "value": encode(v)} for k, v in params.items()]
    else:
        stmt["args"] = [encode(v) for v in params or ()]
    return stmt


def chained(statements: list[tuple[str, Any]]) -> dict[str, Any]:
    """A batch request whose steps each run only if the step before them succeeded."""
    steps = []
    for index, (sql, params) in enumerate(statements):
        step: dict[str, Any] = {"stmt": statement(sql, params)}
        if index:
            step["condition"] = {"type": "ok", "step": index - 1}
        steps.append(step)
    return {"type": "batch", "batch": {"steps": steps}}


def _outcome(result: dict[str, Any]) -> Outcome:
    cols = result.get("cols") or []
    rows = [tuple(decode(v) for v in row) for row in result.get("rows") or []]
    names = tuple(c.get("name") or "" for c in cols) if cols else None
    return Outcome(names=names, rows=rows, rowcount=int(result.get("affected_row_count") or 0))


def batch_steps(response: dict[str, Any]) -> list[Step]:
    """The steps of a batch response: an Outcome, a StepError, or None when skipped."""
    result = response["result"]
    steps: list[Step] = []
    for ok, err in zip(result["step_results"], result["step_errors"], strict=True):
        if err is not None:
            steps.append(StepError(str(err.get("code") or "SQL_ERROR"), str(err.get("message"))))
        elif ok is not None:
            steps.append(_outcome(ok))
        else:
            steps.append(None)
    return steps


def classify(status: int, content_type: str, body: str) -> Failure:
    """A non-200 answer. sqld sends protocol errors (a refused baton among them) as 400
    ``text/plain`` with the error's text, stream errors as JSON ``{"message", "code"}``, and
    its other errors as JSON ``{"error"}``; a proxy in front of it may send anything."""
    if status in (429, 502, 503):
        return Failure.NOT_EXECUTED
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "application/json":
        code = ""
        with contextlib.suppress(ValueError, AttributeError):
            code = str(json.loads(body).get("code") or "")
        if code in STREAM_CODES:
            return Failure.STREAM_LOST
    elif status == 400 and kind == "text/plain":
        text = body.lower()
        if "baton" in text and "closed" in text:  # a close earlier in the same pipeline
            return Failure.UNKNOWN
        if "baton" in text:  # BatonInvalid, BatonReused: refused before anything ran
            return Failure.STREAM_LOST
    if status in (408, 500, 504):
        return Failure.UNKNOWN
    return Failure.FATAL


def http_url(url: str) -> str:
    if url.startswith("libsql://"):
        return "https://" + url.removeprefix("libsql://")
    if url.startswith(("http://", "https://")):
        return url
    raise ValueError(f"not a remote database URL: {url!r}")


class HranaClient:
    """Sends pipelines to one database. Not a connection: streams are named by their baton."""

    def __init__(self, url: str, token: str, *, timeout: float = 60.0):
        self.base = http_url(url).rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = Connections(timeout=timeout, headers=headers)
        self.round_trips = 0
        self.waited = 0.0  # seconds spent waiting for answers

    def close(self) -> None:
        self._http.close()

    def pipeline(self, stream: Stream, requests: list[dict[str, Any]], *,
                 close: bool = False) -> list[dict[str, Any]]:
        """One HTTP round trip; returns each request's response (an ``error`` result raises
        TransportError when it is about the stream, else is returned as is)."""
        body = {"baton": stream.baton, "requests": requests + ([{"type": "close"}] if close
                                                                 else [])}
        self.round_trips += 1
        started = time.perf_counter()
        try:
            answer = self._http.post(f"{stream.base_url or self.base}/v3/pipeline",
                                     json.dumps(body, ensure_ascii=False,
                                                separators=(",", ":")).encode())
        except NotSent as exc:
            raise TransportError(f"cannot connect: {exc}", Failure.NOT_EXECUTED) from exc
        except Unanswered as exc:
            self.waited += time.perf_counter() - started
            stream.lost()
            raise TransportError(f"http error: {exc}", Failure.UNKNOWN) from exc
        self.waited += time.perf_counter() - started
        if answer.status != 200:
            failure = classify(answer.status, answer.content_type, answer.text)
            if failure is not Failure.NOT_EXECUTED:
                stream.lost()
            raise TransportError(f"status={answer.status} {answer.text[:300]}", failure)
        try:
            data = json.loads(answer.body)
        except ValueError as exc:  # a proxy's page, a truncated body: it may have run
            stream.lost()
            raise TransportError(f"not a Hrana answer: {answer.text[:300]}",
                                 Failure.UNKNOWN) from exc
        stream.baton = data.get("baton")
        stream.base_url = data.get("base_url") or stream.base_url
        results = data["results"]
        out = []
        for result in results[:len(requests)]:
            if result.get("type") == "error":
                error = result.get("error") or {}
                code = str(error.get("code") or "")
                if code in STREAM_CODES:
                    stream.lost()
                    raise TransportError(f"stream error: {code}", Failure.STREAM_LOST)
                out.append(result)
            else:
                out.append(result["response"])
        if close:
            stream.baton = None
            stream.base_url = None
        return out


@dataclass
class Stream:
    """A Hrana stream: its next baton (None: a new stream is opened by the next request)."""

    baton: str | None = None
    base_url: str | None = None

    def lost(self) -> None:
        self.baton = None
        self.base_url = None

    @property
    def open(self) -> bool:
        return self.baton is not None
