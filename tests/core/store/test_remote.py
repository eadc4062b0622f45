"""A remote database (core/store/remote.py) through the Hrana server with injected faults:
transient failures are retried, a lost transaction is replayed, a lost commit is resolved,
and nothing is ever committed twice."""

from __future__ import annotations

import multiprocessing
import threading
from inspect import signature

import pytest

from core.store import remote
from core.store.db import Database, DatabaseError, DatabaseUnavailable, TransactionLost
from core.store.migrations import discover, migrate
from iris_testing.server import free_port
from iris_testing.waiting import wait_until
from tests.fakes.hrana import HranaProcess, hrana_server, start_hrana
from tests.fakes.hrana_fixtures import fresh_hrana_url
from tests.fakes.hrana_server import FaultRule


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Short stream lifetimes: a transaction orphaned by a dropped connection holds the write
    lock until its stream expires. A writer behind it waits for that (the server's busy timeout
    is far longer than the lifetime) instead of racing a fraction of a second."""
    with hrana_server(db_dir=tmp_path_factory.mktemp("faults"), stream_ttl=0.5) as running:
        yield running


@pytest.fixture
def url(server):
    server.reset()
    yield fresh_hrana_url(server)
    server.inject()


@pytest.fixture
def db(server, url):
    opened = Database(url, server.token, retry_for=20.0)
    opened.execute("CREATE TABLE t (x INTEGER UNIQUE, tag TEXT)")
    yield opened
    opened.close()


def values(db) -> list[int]:
    return [r["x"] for r in db.query("SELECT x FROM t ORDER BY x")]


def wait_until_streams_expire(server: HranaProcess) -> None:
    wait_until(lambda: not server.stats()["open_streams"], "the server to expire its streams",
               seen=server.stats)


def test_503s_are_retried_in_and_out_of_transactions(db, server):
    server.inject(FaultRule("fail", rate=0.1, status=503),
                  FaultRule("fail", rate=0.05, status=429), seed=7)
    for n in range(40):  # one request per write, three per transaction
        db.execute("INSERT INTO t (x) VALUES (?)", (n,))
    for n in range(40, 60):
        with db.transaction():
            assert db.scalar("SELECT count(*) FROM t WHERE x = ?", (n,)) == 0
            db.execute("INSERT INTO t (x) VALUES (?)", (n,))
    assert values(db) == list(range(60))
    assert server.stats()["fault_fail"] > 10
    assert db.remote_counters()["retries"] == server.stats()["fault_fail"]


def test_startup_waits_for_a_database_that_is_not_up_yet(tmp_path):
    port = free_port()
    started: list[HranaProcess] = []
    thread = threading.Thread(
        target=lambda: started.append(start_hrana(tmp_path / "late.db", port=port)))
    thread.start()  # the server takes a few hundred milliseconds to listen
    try:
        db = Database(f"http://127.0.0.1:{port}", "hrana-test-token", retry_for=20.0)
        assert migrate(db) == discover()
        assert db.remote_counters()["retries"] > 0
        db.close()
    finally:
        thread.join(20)
        for server in started:
            server.stop()


def test_migrations_run_through_5_percent_of_503s(server, url):
    server.inject(FaultRule("fail", rate=0.05), seed=11)
    db = Database(url, server.token)
    assert migrate(db) == discover()
    assert migrate(db) == []
    assert server.stats()["fault_fail"] > 0
    db.close()


class SteppedTime:
    """``time`` for core/store/remote.py's backoff: each reading of the clock moves it 1 ms
    (as a real call takes time), each sleep moves it by its length, and nothing waits."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def monotonic(self) -> float:
        self.now += 0.001
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


def test_an_unreachable_database_is_reported_after_the_retry_window(monkeypatch):
    clock = SteppedTime()
    monkeypatch.setattr(remote, "time", clock)
    with pytest.raises(DatabaseUnavailable, match="Connection refused"):
        Database(f"http://127.0.0.1:{free_port()}", "x", retry_for=0.5)
    # Retried for its own half second (a pause at most 1 s past it), not the default window.
    assert len(clock.pauses) > 1
    assert 0.5 <= clock.now < 0.5 + 1.0 < signature(Database).parameters["retry_for"].default


def test_an_expired_stream_is_replaced(db, server):
    assert db.query("SELECT 1 AS one") == [{"one": 1}]
    wait_until_streams_expire(server)
    assert db.query("SELECT 2 AS two") == [{"two": 2}]


def test_sql_errors_are_not_retried(db, server):
    db.execute("INSERT INTO t (x) VALUES (1)")
    server.reset()
    with pytest.raises(DatabaseError, match="UNIQUE"):
        db.execute("INSERT INTO t (x) VALUES (1)")
    assert db.remote_counters()["retries"] == 0
    assert values(db) == [1]


def test_a_scripts_error_is_not_dropped_and_nothing_of_it_stays(db):
    with pytest.raises(DatabaseError, match="no such table"):
        db.executescript("INSERT INTO t (x) VALUES (1); INSERT INTO nope VALUES (2);")
    assert values(db) == []
    db.executescript("CREATE TRIGGER tagged AFTER INSERT ON t BEGIN"
                     " UPDATE t SET tag = 'seen' WHERE x = new.x; END;"
                     " INSERT INTO t (x) VALUES (3);")
    assert db.query("SELECT x, tag FROM t") == [{"x": 3, "tag": "seen"}]


def test_a_transaction_whose_connection_drops_is_replayed_once(db, server):
    server.inject(FaultRule("drop_after", match="VALUES (2);", times=1))  # the batch, not describe
    with db.transaction():
        db.execute("INSERT INTO t (x) VALUES (1)")
        db.execute("INSERT INTO t (x) VALUES (2)")  # ran, answer lost, stream orphaned
        db.execute("INSERT INTO t (x) VALUES (3)")
    assert values(db) == [1, 2, 3]
    assert db.remote_counters()["replays"] == 1


@pytest.mark.parametrize("fault", ["drop_after", "drop_before"])
def test_a_commit_whose_answer_is_lost_commits_exactly_once(db, server, fault):
    server.inject(FaultRule(fault, match='"COMMIT;"', times=1))
    with db.transaction():
        db.execute("INSERT INTO t (x) VALUES (1)")
        db.execute("INSERT INTO t (x) VALUES (2)")
    assert values(db) == [1, 2]
    counters = db.remote_counters()
    assert counters["lost_commits"] == 1
    assert counters["found_commits"] == (1 if fault == "drop_after" else 0)


def test_a_write_outside_a_transaction_is_never_run_twice(db, server):
    db.execute("INSERT INTO t (x) VALUES (0)")
    for match in ("x + 1;", '"COMMIT;"'):
        server.inject(FaultRule("drop_after", match=match, times=1))
        assert db.execute("UPDATE t SET x = x + 1") == 1
    assert values(db) == [2]
    server.inject(FaultRule("drop_after", match="AS got;", times=1))
    row = db.one("INSERT INTO t (x) VALUES (10) RETURNING x AS got")
    assert row == {"got": 10} and values(db) == [2, 10]


def test_a_lost_transaction_that_would_read_other_data_fails_and_commits_nothing(db, server):
    db.execute("INSERT INTO t (x) VALUES (1)")
    other = Database(db.url, server.token)
    with pytest.raises(TransactionLost), db.transaction():
        seen = db.scalar("SELECT count(*) FROM t")
        wait_until_streams_expire(server)  # the transaction is rolled back on the server
        other.execute("INSERT INTO t (x) VALUES (2)")
        db.execute("INSERT INTO t (x) VALUES (?)", (100 + seen,))
    assert values(db) == [1, 2]
    other.close()


def _increment(url: str, token: str, times: int) -> None:
    db = Database(url, token, retry_for=60.0)
    done = 0
    while done < times:
        try:
            with db.transaction():
                value = db.scalar("SELECT n FROM counter")
                db.execute("UPDATE counter SET n = ?", (value + 1,))
        except TransactionLost:  # the other process wrote while ours was being replayed:
            continue  # nothing of it was committed, so running it again is the contract
        done += 1
    db.close()


def test_two_processes_through_503s_and_lost_commits_lose_and_double_nothing(server, url):
    db = Database(url, server.token)
    db.execute("CREATE TABLE counter (n INTEGER)")
    db.execute("INSERT INTO counter VALUES (0)")
    server.inject(FaultRule("fail", rate=0.05), FaultRule("drop_after", match='"COMMIT;"', times=2),
                  FaultRule("drop_before", match='"COMMIT;"', times=2), seed=5)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_increment, args=(url, server.token, 40)) for _ in range(2)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(90)
        assert proc.exitcode == 0
    assert db.scalar("SELECT n FROM counter") == 80
    stats = server.stats()
    assert stats["fault_drop_after"] == stats["fault_drop_before"] == 2
    db.close()
