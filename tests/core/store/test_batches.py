"""Several statements per round trip (``Database.batch``, ``write_then_read``, ``prefetch``) and
the worker's steps built on them (``store.drains``): the same results on a file and through the
Hrana server; over Hrana, the round trips they promise."""

from __future__ import annotations

import pytest

from core.messages import InboundMessage
from core.store.db import DatabaseError

pytestmark = pytest.mark.both_backends


def round_trips(db) -> int:
    return db.remote_counters().get("round_trips", 0)


def test_a_batch_runs_in_order_and_a_failure_keeps_nothing(open_db, db_backend):
    db = open_db()
    db.execute("CREATE TABLE t (x INTEGER UNIQUE)")
    before = round_trips(db)
    results = db.batch([("INSERT INTO t (x) VALUES (1)", ()),
                        ("INSERT INTO t (x) VALUES (2) RETURNING x", ()),
                        ("SELECT count(*) AS n FROM t", ())])
    assert [r.rows for r in results] == [[], [{"x": 2}], [{"n": 2}]]
    assert results[0].rowcount == 1
    if db_backend == "hrana":
        assert round_trips(db) - before == 2  # the statements, then the marker with COMMIT
    with pytest.raises(DatabaseError, match="UNIQUE"):
        db.batch([("INSERT INTO t (x) VALUES (3)", ()), ("INSERT INTO t (x) VALUES (1)", ()),
                  ("INSERT INTO t (x) VALUES (4)", ())])
    assert [r["x"] for r in db.query("SELECT x FROM t ORDER BY x")] == [1, 2]


def test_a_batch_inside_a_transaction_joins_it(open_db):
    db = open_db()
    db.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(RuntimeError), db.transaction():
        db.batch([("INSERT INTO t (x) VALUES (1)", ()), ("INSERT INTO t (x) VALUES (2)", ())])
        assert db.scalar("SELECT count(*) FROM t") == 2
        raise RuntimeError("changed my mind")
    assert db.scalar("SELECT count(*) FROM t") == 0


def test_write_then_read_commits_then_reads_in_one_round_trip(open_db, db_backend):
    db = open_db()
    db.execute("CREATE TABLE t (x INTEGER UNIQUE, tag TEXT)")
    db.execute("INSERT INTO t (x) VALUES (1), (2)")
    before = round_trips(db)
    changed, [rows] = db.write_then_read(
        [("INSERT INTO t (x) VALUES (3)", ()), ("UPDATE t SET tag = 'a' WHERE x < 3", ())],
        [("SELECT x, tag FROM t ORDER BY x", ())])
    assert changed == 2  # the last write's changed rows
    assert rows == [{"x": 1, "tag": "a"}, {"x": 2, "tag": "a"}, {"x": 3, "tag": None}]
    if db_backend == "hrana":
        assert round_trips(db) - before == 1
    with pytest.raises(DatabaseError, match="UNIQUE"):
        db.write_then_read([("UPDATE t SET tag = 'b'", ()), ("INSERT INTO t (x) VALUES (1)", ())],
                           [("SELECT 1", ())])
    assert db.scalar("SELECT count(*) FROM t WHERE tag = 'b'") == 0


def test_a_prefetched_read_serves_one_query_until_the_next_write(open_db, db_backend):
    db = open_db()
    db.execute("CREATE TABLE t (x INTEGER)")
    db.execute("INSERT INTO t (x) VALUES (1)")
    count = ("SELECT count(*) FROM t", ())
    db.prefetch([count, count])
    before = round_trips(db)
    assert db.scalar(*count) == 1 and db.scalar(*count) == 1
    if db_backend == "hrana":
        assert round_trips(db) == before  # both answered from the prefetch
        assert db.scalar(*count) == 1 and round_trips(db) == before + 1  # each served once
    db.prefetch([count])
    db.execute("INSERT INTO t (x) VALUES (2)")  # a write drops what was prefetched
    assert db.scalar(*count) == 2
    db.prefetch([("SELECT count(*) FROM t WHERE x = ?", (1,))])
    assert db.scalar("SELECT count(*) FROM t WHERE x = ?", (2,)) == 1  # another statement


def message(pmid: str, chat: str = "alice") -> InboundMessage:
    return InboundMessage(platform="http", chat_id=chat, account="http:alice",
                          platform_message_id=pmid, text=pmid)


def test_take_starts_entries_in_order_and_lets_the_lease_go_when_none_is_left(store):
    user = store.users.for_account("http:alice")
    first, second = store.inbox.add(user, message("m1")), store.inbox.add(user, message("m2"))
    lease = f"chat:{user}:http:alice"
    taken = store.drains.take(user, "http:alice", lease, "w1", 60)
    assert (taken.id, taken.attempts) == (first, 1)
    assert store.leases.holder(lease) == "w1"
    assert store.drains.take(user, "http:alice", lease, "w2", 60) is None  # w1 holds it
    assert store.drains.take(user, "http:alice", lease, "w1", 60).id == first  # not finished
    store.inbox.finish(user, first, status="done", session_id=None, reply="ok")
    assert store.drains.take(user, "http:alice", lease, "w1", 60).id == second
    store.inbox.finish(user, second, status="done", session_id=None, reply="ok")
    assert store.drains.take(user, "http:alice", lease, "w1", 60) is None
    assert store.leases.holder(lease) is None  # nothing pending: let go in the same request
    third = store.inbox.add(user, message("m3"))
    taken = store.drains.take(user, "http:alice", lease, "w2", 60)
    assert (taken.id, taken.attempts) == (third, 1)
    assert store.inbox.get(user, first).attempts == 2


def test_take_never_counts_an_attempt_on_another_users_chat(store):
    alice, bob = store.users.for_account("http:alice"), store.users.for_account("http:bob")
    entry = store.inbox.add(alice, message("m1"))
    assert store.drains.take(bob, "http:alice", f"chat:{bob}:http:alice", "w1", 60) is None
    assert store.inbox.get(alice, entry).attempts == 0


def test_a_new_inbox_entry_is_written_and_read_back_in_one_round_trip(store, db_backend):
    user = store.users.for_account("http:alice")
    before = round_trips(store.db)
    entry = store.inbox.add(user, message("m1"))
    assert entry is not None and store.inbox.get(user, entry).message.text == "m1"
    if db_backend == "hrana":
        assert round_trips(store.db) - before == 2  # the add, then the get
    assert store.inbox.add(user, message("m1")) is None  # a retried delivery


def test_a_guarded_write_commits_only_when_its_guard_changes_one_row(open_db, db_backend):
    from core.store.db import NotApplied

    db = open_db()
    db.execute("CREATE TABLE job (id INTEGER PRIMARY KEY, state TEXT)")
    db.execute("CREATE TABLE log (what TEXT)")
    db.execute("INSERT INTO job (id, state) VALUES (1, 'open')")
    close = ("UPDATE job SET state = 'closed' WHERE id = 1 AND state = 'open'", ())
    writes = [("INSERT INTO log (what) VALUES ('before')", ()), close,
              ("INSERT INTO log (what) VALUES ('after')", ())]
    before = round_trips(db)
    changed, [rows] = db.write_then_read(writes, [("SELECT what FROM log ORDER BY what", ())],
                                         guard=1)
    assert changed == 1  # the guard's count
    assert rows == [{"what": "after"}, {"what": "before"}]
    if db_backend == "hrana":
        assert round_trips(db) - before == 1
    with pytest.raises(NotApplied):  # closed already: nothing of the second one is kept
        db.write_then_read(writes, [("SELECT 1", ())], guard=1)
    assert db.scalar("SELECT count(*) FROM log") == 2
    db.execute("INSERT INTO job (id, state) VALUES (2, 'open'), (3, 'open')")
    with pytest.raises(NotApplied):  # two rows are not one either
        db.write_then_read([("UPDATE job SET state = 'x' WHERE state = 'open'", ())], [], guard=0)
    assert db.scalar("SELECT count(*) FROM job WHERE state = 'open'") == 2


def test_a_guarded_write_inside_a_transaction_joins_it(open_db):
    from core.store.db import NotApplied

    db = open_db()
    db.execute("CREATE TABLE job (id INTEGER PRIMARY KEY, state TEXT)")
    db.execute("INSERT INTO job (id, state) VALUES (1, 'closed')")
    with db.transaction():
        db.execute("INSERT INTO job (id, state) VALUES (2, 'open')")
        with pytest.raises(NotApplied):
            db.write_then_read([("UPDATE job SET state = 'x' WHERE id = 1 AND state = 'open'", ()),
                                ("INSERT INTO job (id, state) VALUES (9, 'after')", ())],
                               [], guard=0)
        changed, [rows] = db.write_then_read(
            [("UPDATE job SET state = 'closed' WHERE id = 2", ())],
            [("SELECT count(*) AS n FROM job", ())], guard=0)
    assert (changed, rows) == (1, [{"n": 2}])  # the refused write's later insert never ran
    assert db.scalar("SELECT count(*) FROM job WHERE id = 9") == 0
