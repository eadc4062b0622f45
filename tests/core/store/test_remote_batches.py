"""Requests that carry several statements, through the Hrana server's faults: a lost answer is
resolved through the commit marker, never by sending the writes twice."""

from __future__ import annotations

import pytest

from core.store.db import Database
from tests.fakes.hrana import hrana_server
from tests.fakes.hrana_fixtures import fresh_hrana_url
from tests.fakes.hrana_server import FaultRule


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # A writer behind an orphaned transaction waits for its stream to expire (0.5 s) within
    # the server's default busy timeout (5 s), instead of racing a fraction of a second.
    with hrana_server(db_dir=tmp_path_factory.mktemp("batches"), stream_ttl=0.5) as running:
        yield running


@pytest.fixture
def db(server):
    server.reset()
    opened = Database(fresh_hrana_url(server), server.token, retry_for=20.0)
    opened.execute("CREATE TABLE t (x INTEGER UNIQUE, n INTEGER DEFAULT 0)")
    opened.execute("INSERT INTO t (x) VALUES (1), (2)")
    yield opened
    opened.close()
    server.inject()


@pytest.mark.parametrize("fault", ["drop_after", "drop_before"])
def test_write_then_read_with_its_answer_lost_writes_once_and_reads_again(db, server, fault):
    server.inject(FaultRule(fault, match="n + 1", times=1))
    changed, [rows] = db.write_then_read([("UPDATE t SET n = n + 1", ())],
                                         [("SELECT x, n FROM t ORDER BY x", ())])
    assert changed == 2
    assert rows == [{"x": 1, "n": 1}, {"x": 2, "n": 1}]
    counters = db.remote_counters()
    assert counters["lost_commits"] == 1
    assert counters["found_commits"] == (1 if fault == "drop_after" else 0)


def test_a_transaction_whose_first_request_is_lost_starts_again(db, server):
    server.inject(FaultRule("drop_after", match="VALUES (3)", times=1))
    with db.transaction():
        db.execute("INSERT INTO t (x) VALUES (3)")  # ran in a transaction now orphaned
        db.execute("INSERT INTO t (x) VALUES (4)")
    assert [r["x"] for r in db.query("SELECT x FROM t ORDER BY x")] == [1, 2, 3, 4]


@pytest.mark.parametrize("fault", ["drop_after", "drop_before"])
def test_a_batch_whose_commit_answer_is_lost_commits_once(db, server, fault):
    server.inject(FaultRule(fault, match='"COMMIT;"', times=1))
    results = db.batch([("UPDATE t SET n = n + 1 WHERE x = 1", ()),
                        ("INSERT INTO t (x) VALUES (5) RETURNING x", ())])
    assert results[1].rows == [{"x": 5}]
    assert db.query("SELECT x, n FROM t ORDER BY x") == [
        {"x": 1, "n": 1}, {"x": 2, "n": 0}, {"x": 5, "n": 0}]


def test_a_statement_failing_in_a_one_request_write_leaves_nothing(db, server):
    before = server.stats()["open_streams"]  # the fixture's own streams may still be open
    with pytest.raises(Exception, match="UNIQUE"):
        db.write_then_read([("UPDATE t SET n = 9", ()), ("INSERT INTO t (x) VALUES (1)", ())],
                           [])
    assert server.stats()["open_streams"] <= before  # the request closed its stream
    assert db.scalar("SELECT count(*) FROM t WHERE n = 9") == 0


def test_a_lost_answer_gets_its_count_back_when_old_markers_are_pruned_with_it(db, server,
                                                                             monkeypatch):
    from core.store import remote

    monkeypatch.setattr(remote, "_PRUNE_EVERY", 1)  # every commit also prunes old markers
    server.inject(FaultRule("drop_after", match="n + 1", times=1))
    assert db.execute("UPDATE t SET n = n + 1") == 2
    assert db.remote_counters()["found_commits"] == 1


@pytest.mark.parametrize("fault", ["drop_after", "drop_before"])
def test_a_guarded_write_with_its_answer_lost_commits_once(db, server, fault):
    from core.store.db import NotApplied

    server.inject(FaultRule(fault, match="n + 1", times=1))
    guarded = [("UPDATE t SET n = n + 1 WHERE x = 1 AND n = 0", ()),
               ("INSERT INTO t (x) VALUES (7)", ())]
    changed, [rows] = db.write_then_read(guarded, [("SELECT x, n FROM t ORDER BY x", ())],
                                         guard=0)
    assert changed == 1
    assert rows == [{"x": 1, "n": 1}, {"x": 2, "n": 0}, {"x": 7, "n": 0}]
    assert db.remote_counters()["lost_commits"] == 1
    with pytest.raises(NotApplied):  # sent again, the guard finds it done: nothing twice
        db.write_then_read(guarded, [], guard=0)
    assert db.scalar("SELECT count(*) FROM t WHERE x = 7") == 1
