"""The ``libsql`` client's remote mode (what core/store/db.py uses against Turso) against the
Hrana test server: what it sends, and how it behaves when things go wrong. These pin down the
client facts core/store/remote.py is built on."""

from __future__ import annotations

import libsql
import pytest

from iris_testing.waiting import wait_until
from tests.fakes.hrana import hrana_server
from tests.fakes.hrana_fixtures import fresh_hrana_url
from tests.fakes.hrana_server import FaultRule


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with hrana_server(db_dir=tmp_path_factory.mktemp("client"), stream_ttl=1.0) as running:
        yield running


@pytest.fixture
def conn(server):
    connection = libsql.connect(fresh_hrana_url(server),
                                auth_token=server.token, isolation_level=None)
    yield connection
    server.inject()


def test_values_columns_and_changes_round_trip(conn):
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, data BLOB)")
    cursor = conn.execute("INSERT INTO t (name, score, data) VALUES (?, ?, ?), (?, ?, ?)",
                          ("a", 1.5, b"\x00\x01", "b", None, None))
    assert cursor.rowcount == 2
    rows = conn.execute("SELECT id, name, score, data FROM t ORDER BY id").fetchall()
    assert rows == [(1, "a", 1.5, b"\x00\x01"), (2, "b", None, None)]
    returning = conn.execute("INSERT INTO t (name) VALUES ('c') RETURNING id").fetchall()
    assert returning == [(3,)]


def test_each_statement_is_a_describe_and_an_execute(conn, server):
    conn.execute("CREATE TABLE t (x)")
    server.reset()
    conn.execute("INSERT INTO t VALUES (1)")
    conn.execute("SELECT x FROM t").fetchall()
    stats = server.stats()
    assert stats["round_trips"] == 4 and stats["statements"] == 2


def test_a_transaction_spans_pipelines_on_one_stream(conn):
    conn.execute("CREATE TABLE t (x)")
    conn.execute("BEGIN IMMEDIATE")
    assert conn.in_transaction
    conn.execute("INSERT INTO t VALUES (1)")
    conn.execute("ROLLBACK")
    assert not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM t").fetchall() == [(0,)]


def test_sql_errors_and_transport_errors_are_value_errors_with_a_message(conn, server):
    with pytest.raises(ValueError, match='code: "SQLITE_ERROR"'):
        conn.execute("SELECT * FROM nope")
    server.inject(FaultRule("fail", status=503, times=1))
    with pytest.raises(ValueError, match="status=503"):
        conn.execute("SELECT 1")
    server.inject(FaultRule("drop_after", times=1))
    with pytest.raises(ValueError, match="connection closed before message completed"):
        conn.execute("SELECT 1")


def test_executescript_drops_the_errors_of_its_statements(conn):
    """Why db.py runs a script's statements one by one against a remote database."""
    conn.execute("CREATE TABLE t (x)")
    conn.executescript("INSERT INTO t VALUES (1); INSERT INTO nope VALUES (2);")  # no error
    assert conn.execute("SELECT count(*) FROM t").fetchall() == [(1,)]


def test_an_expired_stream_is_never_replaced(conn, server):
    """After a query the client keeps its stream; once the server expires it, every later
    statement fails: db.py opens a new connection."""
    conn.execute("SELECT 1").fetchall()
    assert server.stats()["open_streams"] >= 1
    # every stream, this one included, has expired
    wait_until(lambda: not server.stats()["open_streams"], "the server to expire its streams",
               seen=server.stats)
    for _ in range(2):
        with pytest.raises(ValueError, match="STREAM_EXPIRED"):
            conn.execute("SELECT 1")


def test_a_503_mid_transaction_leaves_the_stream_usable(conn, server):
    conn.execute("CREATE TABLE t (x)")
    conn.execute("BEGIN IMMEDIATE")
    server.inject(FaultRule("fail", status=503, times=1, match="VALUES (1)"))
    with pytest.raises(ValueError, match="status=503"):
        conn.execute("INSERT INTO t VALUES (1)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.execute("COMMIT")
    assert conn.execute("SELECT count(*) FROM t").fetchall() == [(1,)]


def test_a_refused_connection_is_reported_as_such(tmp_path):
    with hrana_server(tmp_path / "gone.db") as gone:
        url = gone.url
    conn = libsql.connect(url, auth_token="x", isolation_level=None)
    with pytest.raises(ValueError, match="Connection refused"):
        conn.execute("SELECT 1")
