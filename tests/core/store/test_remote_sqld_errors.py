"""The remote database (core/store/remote.py, core/store/hrana.py) against errors shaped as sqld
sends them (tests/fakes/hrana_server.py follows ``libsql-server/src/hrana/http/mod.rs``): a
baton refused with 400 ``text/plain`` (a restart or failover) is a lost stream whose
transaction is replayed, ``TRANSACTION_TIMEOUT`` is retried with the transaction replayed, and
a non-finite float is refused before anything is sent."""

from __future__ import annotations

import math

import pytest

from core.store.db import Database, DatabaseError
from core.store.hrana import Failure, classify
from tests.fakes.hrana import hrana_server
from tests.fakes.hrana_fixtures import fresh_hrana_url
from tests.fakes.hrana_server import FaultRule

ON_A_STREAM = '"baton":"'  # a request carrying a baton: inside an open transaction


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with hrana_server(db_dir=tmp_path_factory.mktemp("sqld"), stream_ttl=5.0) as running:
        yield running


@pytest.fixture
def db(server):
    server.reset()
    opened = Database(fresh_hrana_url(server), server.token, retry_for=20.0)
    opened.execute("CREATE TABLE t (x INTEGER UNIQUE, tag TEXT)")
    yield opened
    server.inject()
    opened.close()


def values(db) -> list[int]:
    return [r["x"] for r in db.query("SELECT x FROM t ORDER BY x")]


def test_a_baton_refused_mid_transaction_replays_the_transaction_once(db, server):
    with db.transaction():
        db.execute("INSERT INTO t (x) VALUES (1)")
        server.inject(FaultRule("restart", match=ON_A_STREAM, times=1))
        db.execute("INSERT INTO t (x) VALUES (2)")  # 400 text/plain: "Received an invalid baton"
        db.execute("INSERT INTO t (x) VALUES (3)")
    assert values(db) == [1, 2, 3]
    assert server.stats()["error_BATON_INVALID"] == 1
    assert db.remote_counters()["replays"] == 1


def test_a_baton_refused_on_commit_commits_once(db, server):
    with db.transaction():
        db.execute("INSERT INTO t (x) VALUES (1)")
        db.execute("INSERT INTO t (x) VALUES (2)")
        server.inject(FaultRule("restart", match='"COMMIT;"', times=1))
    assert values(db) == [1, 2]
    counters = db.remote_counters()
    assert server.stats()["error_BATON_INVALID"] == 1
    assert counters["replays"] == 1 and counters["lost_commits"] == 0


def test_a_transaction_timed_out_by_the_server_is_retried_and_replayed(db, server):
    with db.transaction():
        db.execute("INSERT INTO t (x) VALUES (1)")
        server.inject(FaultRule("tx_timeout", match=ON_A_STREAM, times=1))
        db.execute("INSERT INTO t (x, tag) VALUES (2, 'b')")  # rolled back: 1 is gone too
        db.execute("INSERT INTO t (x) VALUES (3)")
    assert values(db) == [1, 2, 3]
    counters = db.remote_counters()
    assert server.stats()["fault_tx_timeout"] == 1
    assert counters["retries"] >= 1 and counters["replays"] == 1


def test_a_commit_timed_out_by_the_server_is_committed_once(db, server):
    with db.transaction():
        db.execute("INSERT INTO t (x) VALUES (1)")
        server.inject(FaultRule("tx_timeout", match='"COMMIT;"', times=1))
    assert values(db) == [1]
    assert db.remote_counters()["retries"] >= 1


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_a_non_finite_float_is_refused_before_sending(db, server, number):
    sent = server.stats()["round_trips"]
    with pytest.raises(DatabaseError, match="only finite numbers"):
        db.execute("INSERT INTO t (x, tag) VALUES (?, ?)", (1, number))
    assert server.stats()["round_trips"] == sent
    assert values(db) == []


@pytest.mark.parametrize(("status", "content_type", "body", "failure"), [
    # http/mod.rs protocol_error_response: 400 text/plain, the ProtocolError's text
    (400, "text/plain", "Received an invalid baton", Failure.STREAM_LOST),
    (400, "text/plain", "Received a baton that has already been used", Failure.STREAM_LOST),
    (400, "text/plain", "Stream for this baton was closed", Failure.UNKNOWN),
    (400, "text/plain", "Cannot deserialize client message from JSON: x", Failure.FATAL),
    # http/mod.rs stream_error_response: 400 JSON with a code
    (400, "application/json", '{"message": "The stream has expired due to inactivity", '
     '"code": "STREAM_EXPIRED"}', Failure.STREAM_LOST),
    # error.rs format_err: JSON {"error"}
    (401, "application/json", '{"error": "Unauthorized: `The JWT is invalid`"}', Failure.FATAL),
    (429, "application/json", '{"error": "too many requests"}', Failure.NOT_EXECUTED),
    (500, "application/json", '{"error": "internal"}', Failure.UNKNOWN),
    (502, "text/html", "<html>bad gateway</html>", Failure.NOT_EXECUTED),
])
def test_answers_are_classified_by_status_content_type_then_code(status, content_type, body,
                                                                 failure):
    assert classify(status, content_type, body) is failure
