"""The Hrana test server against the Hrana 3 spec (../shared/specs/HRANA_3_SPEC.md), over real
HTTP with httpx: the server runs as its own process, as the libsql client needs it to."""

from __future__ import annotations

import base64
import json
import time

import httpx
import pytest

from iris_testing.waiting import wait_until
from tests.fakes.hrana import hrana_server
from tests.fakes.hrana_fixtures import fresh_hrana_url
from tests.fakes.hrana_server import FaultRule

TOKEN = "spec-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with hrana_server(db_dir=tmp_path_factory.mktemp("spec"), token=TOKEN, busy_timeout=0.2,
                      stream_ttl=1.0) as running:
        yield running


@pytest.fixture
def db(server):
    """A client for a fresh database of ``server``; faults are cleared afterwards."""
    base = fresh_hrana_url(server)
    client = Client(base)
    yield client
    server.inject()
    client.http.close()


class Client:
    def __init__(self, base: str, token: str = TOKEN):
        self.base = base
        self.http = httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=10)

    def post(self, body: dict, path: str = "pipeline") -> httpx.Response:
        return self.http.post(f"{self.base}/v3/{path}", json=body)

    def pipeline(self, *requests: dict, baton: str | None = None) -> dict:
        response = self.post({"baton": baton, "requests": list(requests)})
        assert response.status_code == 200, response.text
        return response.json()

    def run(self, *requests: dict, baton: str | None = None) -> list[dict]:
        """Run on a fresh stream and close it; the stream responses (or errors)."""
        body = self.pipeline(*requests, {"type": "close"}, baton=baton)
        assert body["baton"] is None
        return [r["response"] if r["type"] == "ok" else r for r in body["results"][:-1]]

    def cursor(self, batch: dict, baton: str | None = None) -> list[dict]:
        response = self.post({"baton": baton, "batch": batch}, path="cursor")
        assert response.status_code == 200, response.text
        return [json.loads(line) for line in response.text.splitlines()]


def stmt(sql: str, *args, want_rows: bool | None = None, **named) -> dict:
    body: dict = {"sql": sql, "args": [value(a) for a in args],
                  "named_args": [{"name": k, "value": value(v)} for k, v in named.items()]}
    if want_rows is not None:
        body["want_rows"] = want_rows
    return body


def value(v) -> dict:
    if v is None:
        return {"type": "null"}
    if isinstance(v, bool | int):
        return {"type": "integer", "value": str(int(v))}
    if isinstance(v, float):
        return {"type": "float", "value": v}
    if isinstance(v, bytes):
        return {"type": "blob", "base64": base64.b64encode(v).decode()}
    return {"type": "text", "value": v}


def execute(sql: str, *args, **named) -> dict:
    return {"type": "execute", "stmt": stmt(sql, *args, **named)}


def test_version_check_and_json_only(server):
    hello = httpx.get(f"{server.url}/v3")
    assert hello.status_code == 200 and hello.headers["content-type"] == "text/plain"
    missing = httpx.get(f"{server.url}/v3-protobuf")
    assert missing.status_code == 404 and missing.content == b""  # axum's fallback


def test_a_missing_or_wrong_token_is_401_with_an_error_body(db):
    """sqld error.rs: AuthError → 401, JSON ``{"error": "Unauthorized: `...`"}``."""
    for headers in ({}, {"Authorization": "Bearer nope"}):
        response = httpx.post(f"{db.base}/v3/pipeline", headers=headers,
                              json={"baton": None, "requests": []})
        assert response.status_code == 401
        assert response.headers["content-type"] == "application/json"
        assert set(response.json()) == {"error"}
        assert response.json()["error"].startswith("Unauthorized: `")


def test_values_round_trip_in_their_json_encoding(db):
    big = 2**62 + 1
    (result,) = db.run(execute("SELECT ?, ?, ?, ?, ?", big, 2.5, "héllo", b"\x00\xff", None))
    row = result["result"]["rows"][0]
    assert row == [{"type": "integer", "value": str(big)}, {"type": "float", "value": 2.5},
                   {"type": "text", "value": "héllo"},
                   {"type": "blob", "base64": base64.b64encode(b"\x00\xff").decode()},
                   {"type": "null"}]
    # unpadded base64, as the libsql client sends it
    (echo,) = db.run({"type": "execute", "stmt": {"sql": "SELECT hex(?)",
                                                   "args": [{"type": "blob", "base64": "eHg"}]}})
    assert echo["result"]["rows"][0][0]["value"] == "7878"


def test_statement_results_report_columns_changes_and_rowid(db):
    _, insert, select = db.run(
        execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)"),
        execute("INSERT INTO t (name) VALUES (?), (?)", "a", "b"),
        execute("SELECT id, name, length(name) AS n FROM t ORDER BY id"),
    )
    assert insert["result"]["affected_row_count"] == 2
    assert insert["result"]["last_insert_rowid"] == "2"
    result = select["result"]
    assert result["cols"] == [{"name": "id", "decltype": "INTEGER"},
                              {"name": "name", "decltype": "TEXT"},
                              {"name": "n", "decltype": None}]
    assert [r[1]["value"] for r in result["rows"]] == ["a", "b"]
    (quiet,) = db.run({"type": "execute", "stmt": stmt("SELECT * FROM t", want_rows=False)})
    assert quiet["result"]["rows"] == []


def test_arguments_bind_by_position_and_by_name_with_the_prefix_guessed(db):
    (result,) = db.run(execute("SELECT ?1 || :a || @b || $c", "x", a="1", b="2", c="3"))
    assert result["result"]["rows"][0][0]["value"] == "x123"
    missing, extra = db.run(execute("SELECT ?, ?", 1), execute("SELECT ?", 1, 2))
    assert missing["type"] == extra["type"] == "error"
    assert missing["error"]["code"] == "ARGS_INVALID"


def test_every_request_of_a_pipeline_runs_even_after_an_error(db):
    results = db.run(
        execute("CREATE TABLE t (x INTEGER UNIQUE)"), execute("INSERT INTO t VALUES (1)"),
        execute("INSERT INTO t VALUES (1)"), execute("INSERT INTO t VALUES (2)"),
        execute("SELECT count(*) FROM t"), execute("SELECT 1; SELECT 2"),
    )
    error = results[2]
    assert error["type"] == "error"
    assert error["error"] == {"message": "UNIQUE constraint failed: t.x",
                              "code": "SQLITE_CONSTRAINT_UNIQUE"}
    assert results[4]["result"]["rows"][0][0]["value"] == "2"
    assert results[5]["type"] == "error"  # one statement per Stmt


def test_batons_chain_a_stream_and_are_refused_when_reused_forged_or_closed(db):
    first = db.pipeline(execute("CREATE TABLE t (x)"))
    baton = first["baton"]
    second = db.pipeline(execute("INSERT INTO t VALUES (1)"), baton=baton)
    assert second["baton"] not in (None, baton)
    reused = db.post({"baton": baton, "requests": [execute("SELECT 1")]})
    assert plain_400(reused) == "Received a baton that has already been used"
    middle = len(baton) // 2  # a middle character carries six whole bits (the last may not)
    tampered = baton[:middle] + ("A" if baton[middle] != "A" else "B") + baton[middle + 1:]
    forged = db.post({"baton": tampered, "requests": []})
    assert plain_400(forged) == "Received an invalid baton"
    after_close = db.post({"baton": second["baton"],
                           "requests": [{"type": "close"}, execute("SELECT 1")]})
    assert plain_400(after_close) == "Stream for this baton was closed"  # request.rs get_db
    after = db.post({"baton": second["baton"], "requests": []})
    assert plain_400(after) == "Received an invalid baton"  # its handle is gone


def plain_400(response: httpx.Response) -> str:
    """sqld http/mod.rs protocol_error_response: 400, text/plain, the error's text."""
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "text/plain"
    return response.text


def test_a_restart_forgets_every_stream_and_its_transaction(db, server):
    db.run(execute("CREATE TABLE t (x)"))
    open_tx = db.pipeline(execute("BEGIN IMMEDIATE"), execute("INSERT INTO t VALUES (1)"))
    server.inject(FaultRule("restart", times=1))
    late = db.post({"baton": open_tx["baton"], "requests": [execute("COMMIT")]})
    assert plain_400(late) == "Received an invalid baton"
    [count] = db.run(execute("SELECT count(*) FROM t"))
    assert count["result"]["rows"][0][0]["value"] == "0"  # rolled back, lock released


def test_a_timed_out_transaction_is_rolled_back_and_its_next_program_fails(db, server):
    db.run(execute("CREATE TABLE t (x)"))
    open_tx = db.pipeline(execute("BEGIN IMMEDIATE"), execute("INSERT INTO t VALUES (1)"))
    server.inject(FaultRule("tx_timeout", times=1))
    batch = {"type": "batch", "batch": {"steps": [
        {"stmt": {"sql": "INSERT INTO t VALUES (2)"}},
        {"condition": {"type": "ok", "step": 0}, "stmt": {"sql": "COMMIT"}}]}}
    timed_out = db.pipeline(batch, execute("SELECT count(*) FROM t"), baton=open_tx["baton"])
    result = timed_out["results"][0]["response"]["result"]
    assert result["step_results"] == [None, None]
    assert [e["code"] for e in result["step_errors"]] == ["TRANSACTION_TIMEOUT"] * 2
    assert timed_out["results"][1]["response"]["result"]["rows"][0][0]["value"] == "0"


def test_each_stream_is_its_own_connection_with_its_own_transaction(db):
    db.run(execute("CREATE TABLE t (x)"))
    a = db.pipeline(execute("BEGIN"), execute("INSERT INTO t VALUES (1)"),
                    {"type": "get_autocommit"})
    assert a["results"][2]["response"]["is_autocommit"] is False
    count, autocommit = db.run(execute("SELECT count(*) FROM t"), {"type": "get_autocommit"})
    assert count["result"]["rows"][0][0]["value"] == "0"  # not committed yet
    assert autocommit["is_autocommit"] is True
    db.pipeline(execute("COMMIT"), {"type": "close"}, baton=a["baton"])
    (count,) = db.run(execute("SELECT count(*) FROM t"))
    assert count["result"]["rows"][0][0]["value"] == "1"


def test_a_writer_waits_for_the_lock_then_gets_sqlite_busy(db):
    db.run(execute("CREATE TABLE t (x)"))
    holder = db.pipeline(execute("BEGIN IMMEDIATE"))
    (busy,) = db.run(execute("INSERT INTO t VALUES (1)"))
    assert busy["type"] == "error" and busy["error"]["code"] == "SQLITE_BUSY"
    db.pipeline(execute("ROLLBACK"), {"type": "close"}, baton=holder["baton"])


def cond(kind: str, **fields) -> dict:
    return {"type": kind, **fields}


def test_batch_conditions_run_a_non_interactive_transaction(db):
    db.run(execute("CREATE TABLE t (x INTEGER UNIQUE)"), execute("INSERT INTO t VALUES (1)"))

    def transfer(value: int) -> dict:
        steps = [
            {"stmt": stmt("BEGIN")},
            {"condition": cond("ok", step=0), "stmt": stmt("INSERT INTO t VALUES (?)", value)},
            {"condition": cond("ok", step=1), "stmt": stmt("COMMIT")},
            {"condition": cond("not", cond=cond("ok", step=2)), "stmt": stmt("ROLLBACK")},
        ]
        (result,) = db.run({"type": "batch", "batch": {"steps": steps}})
        return result["result"]

    good = transfer(2)
    assert good["step_errors"] == [None, None, None, None]
    assert good["step_results"][3] is None  # skipped: both result and error are null
    bad = transfer(1)
    assert bad["step_errors"][1]["code"] == "SQLITE_CONSTRAINT_UNIQUE"
    assert bad["step_results"][2] is None and bad["step_errors"][2] is None
    assert bad["step_results"][3] is not None  # rolled back
    (count,) = db.run(execute("SELECT count(*) FROM t"))
    assert count["result"]["rows"][0][0]["value"] == "2"


def test_batch_conditions_and_or_error_and_is_autocommit(db):
    steps = [
        {"stmt": stmt("SELECT 1")},
        {"stmt": stmt("SELECT nope")},
        {"condition": cond("and", conds=[cond("ok", step=0), cond("error", step=1)]),
         "stmt": stmt("SELECT 'and'")},
        {"condition": cond("or", conds=[cond("ok", step=1), cond("error", step=0)]),
         "stmt": stmt("SELECT 'or'")},
        {"condition": cond("is_autocommit"), "stmt": stmt("SELECT 'auto'")},
        {"condition": cond("ok", step=3), "stmt": stmt("SELECT 'skipped step is not ok'")},
        {"condition": cond("error", step=3), "stmt": stmt("SELECT 'nor an error'")},
    ]
    (result,) = db.run({"type": "batch", "batch": {"steps": steps}})
    ran = [r is not None for r in result["result"]["step_results"]]
    assert ran == [True, False, True, False, True, False, False]
    assert result["result"]["step_errors"][1]["code"] == "SQLITE_ERROR"
    forward = [{"condition": cond("ok", step=1), "stmt": stmt("SELECT 1")},
               {"stmt": stmt("SELECT 2")}]
    bad = db.post({"baton": None, "requests": [{"type": "batch", "batch": {"steps": forward}}]})
    assert plain_400(bad) == "Invalid reference to step in a batch condition"  # batch.rs


def test_sequence_runs_statements_until_one_fails(db):
    ok, failed, count = db.run(
        {"type": "sequence", "sql": "CREATE TABLE t (x); INSERT INTO t VALUES (1);"
                                    " INSERT INTO t VALUES (2) -- trailing comment"},
        {"type": "sequence", "sql": "INSERT INTO t VALUES (3); INSERT INTO nope VALUES (1);"
                                    " INSERT INTO t VALUES (4)"},
        execute("SELECT group_concat(x) FROM t"),
    )
    assert ok == {"type": "sequence"}
    assert failed["type"] == "error"
    assert count["result"]["rows"][0][0]["value"] == "1,2,3"


def test_describe_reports_parameters_columns_and_kind(db):
    db.run(execute("CREATE TABLE t (id INTEGER, name TEXT)"))
    select, insert, explain = db.run(
        {"type": "describe", "sql": "SELECT id, name AS n FROM t WHERE id = ? AND name = :nm"},
        {"type": "describe", "sql": "INSERT INTO t VALUES (?1, @v)"},
        {"type": "describe", "sql": "EXPLAIN SELECT 1"},
    )
    assert select["result"] == {
        "params": [{"name": None}, {"name": ":nm"}],
        "cols": [{"name": "id", "decltype": "INTEGER"}, {"name": "n", "decltype": "TEXT"}],
        "is_explain": False, "is_readonly": True,
    }
    assert insert["result"]["params"] == [{"name": "?1"}, {"name": "@v"}]
    assert insert["result"]["is_readonly"] is False
    assert explain["result"]["is_explain"] is True
    (count,) = db.run(execute("SELECT count(*) FROM t"))
    assert count["result"]["rows"][0][0]["value"] == "0"  # describing ran nothing


def test_stored_sql_is_scoped_to_its_stream(db):
    body = db.pipeline(
        {"type": "store_sql", "sql_id": 7, "sql": "SELECT ? * 2"},
        {"type": "execute", "stmt": {"sql_id": 7, "args": [value(21)]}},
        {"type": "describe", "sql_id": 7},
        {"type": "close_sql", "sql_id": 7}, {"type": "close_sql", "sql_id": 99},
    )
    assert [r["type"] for r in body["results"]] == ["ok"] * 5
    assert body["results"][1]["response"]["result"]["rows"][0][0]["value"] == "42"
    # sqld: SqlExists, SqlNotFound and sql with sql_id are ProtocolErrors (mod.rs), failing the
    # whole HTTP request as 400 text/plain
    twice = db.post({"baton": None, "requests": [
        {"type": "store_sql", "sql_id": 7, "sql": "SELECT 1"},
        {"type": "store_sql", "sql_id": 7, "sql": "SELECT 2"}]})
    assert plain_400(twice) == "SQL text 7 already exists"
    other = db.post({"baton": None, "requests": [{"type": "execute", "stmt": {"sql_id": 7}}]})
    assert plain_400(other) == "SQL text 7 not found"  # closed, and another stream's anyway
    both = db.post({"baton": None, "requests": [
        {"type": "execute", "stmt": {"sql": "SELECT 1", "sql_id": 7}}]})
    plain_400(both)


def test_cursor_streams_the_batch_as_entries(db):
    db.run(execute("CREATE TABLE t (x INTEGER)"), execute("INSERT INTO t VALUES (1), (2)"))
    lines = db.cursor({"steps": [
        {"stmt": stmt("SELECT x FROM t ORDER BY x")},
        {"stmt": stmt("SELECT nope")},
        {"condition": cond("ok", step=1), "stmt": stmt("SELECT 3")},
    ]})
    head, *entries = lines
    assert set(head) == {"baton", "base_url"} and head["baton"]
    assert [e["type"] for e in entries] == ["step_begin", "row", "row", "step_end", "step_error"]
    assert entries[0] == {"type": "step_begin", "step": 0,
                          "cols": [{"name": "x", "decltype": "INTEGER"}]}
    assert entries[4]["step"] == 1 and entries[4]["error"]["code"] == "SQLITE_ERROR"
    follow = db.pipeline({"type": "get_autocommit"}, {"type": "close"}, baton=head["baton"])
    assert follow["results"][0]["response"]["is_autocommit"] is True


def test_an_idle_stream_expires_and_its_transaction_is_rolled_back(db, server):
    db.run(execute("CREATE TABLE t (x)"))
    open_tx = db.pipeline(execute("BEGIN IMMEDIATE"), execute("INSERT INTO t VALUES (1)"))
    # every stream, this one included, has expired
    wait_until(lambda: not server.stats()["open_streams"], "the server to expire its streams",
               seen=server.stats)
    late = db.post({"baton": open_tx["baton"], "requests": [execute("COMMIT")]})
    assert late.status_code == 400 and late.headers["content-type"] == "application/json"
    assert late.json() == {"message": "The stream has expired due to inactivity",
                           "code": "STREAM_EXPIRED"}  # http/mod.rs stream_error_response
    insert, count = db.run(execute("INSERT INTO t VALUES (2)"), execute("SELECT count(*) FROM t"))
    assert insert["type"] == "execute"  # the lock was released
    assert count["result"]["rows"][0][0]["value"] == "1"


def test_malformed_requests_are_400_and_run_nothing(db):
    plain_400(db.post({"baton": None, "requests": [{"type": "teleport"}]}))
    bad_json = db.http.post(f"{db.base}/v3/pipeline", content=b"{nope")
    assert plain_400(bad_json).startswith("Cannot deserialize client message from JSON")
    nan = db.http.post(f"{db.base}/v3/pipeline", content=b'{"baton": null, "requests": '
                       b'[{"type": "execute", "stmt": {"sql": "SELECT ?", "args": '
                       b'[{"type": "float", "value": NaN}]}}]}')
    assert plain_400(nan).startswith("Cannot deserialize client message from JSON")


def test_counters_and_fault_injection(db, server):
    db.run(execute("CREATE TABLE t (x)"))
    server.reset()
    first = db.pipeline(execute("INSERT INTO t VALUES (1)"))
    server.inject(FaultRule("fail", status=503, times=1))
    refused = db.post({"baton": first["baton"], "requests": [execute("INSERT INTO t VALUES (2)")]})
    assert refused.status_code == 503 and set(refused.json()) == {"error"}
    # nothing ran and the baton is still good
    second = db.pipeline(execute("INSERT INTO t VALUES (2)"), baton=first["baton"])
    server.inject(FaultRule("drop_after", match="VALUES (3)"))
    with pytest.raises(httpx.RemoteProtocolError):
        db.post({"baton": second["baton"], "requests": [execute("INSERT INTO t VALUES (3)")]})
    server.inject(FaultRule("drop_before", match="VALUES (4)"))
    with pytest.raises(httpx.RemoteProtocolError):
        db.run(execute("INSERT INTO t VALUES (4)"))
    server.inject(FaultRule("fail", status=429, rate=0.5), seed=3)
    statuses = [db.post({"baton": None, "requests": [{"type": "close"}]}).status_code
                for _ in range(40)]
    assert statuses.count(429) in range(10, 31) and set(statuses) == {200, 429}
    server.inject()
    stats = server.stats()
    assert stats["fault_fail"] == 1 + statuses.count(429)
    assert stats["fault_drop_after"] == stats["fault_drop_before"] == 1
    assert stats["statements"] == 3  # the 503 and the early drop ran nothing
    assert stats["round_trips"] == 5 + 40
    (count,) = db.run(execute("SELECT group_concat(x) FROM t"))
    assert count["result"]["rows"][0][0]["value"] == "1,2,3"  # the late drop ran its insert


def test_a_fixed_delay_is_added_to_every_request(db, server):
    server.inject(delay=0.2)
    started = time.monotonic()
    db.run(execute("SELECT 1"))
    assert time.monotonic() - started >= 0.2
