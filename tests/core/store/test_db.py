import multiprocessing
import os

import pytest

from core.store.db import Database, DatabaseClosed, DatabaseError
from core.store.migrations import discover, migrate


def test_migrations_apply_once(open_db):
    db = open_db()
    assert migrate(db) == discover()
    assert migrate(db) == []
    tables = {r["name"] for r in db.query("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"users", "accounts", "sessions", "messages", "inbox", "leases", "usage"} <= tables


def test_every_user_data_table_has_user_id(open_db):
    db = open_db()
    migrate(db)
    system = {"_migrations", "_iris_commits", "users", "sqlite_sequence"}
    for row in db.query("SELECT name FROM sqlite_master WHERE type='table'"):
        name = row["name"]
        if name in system or name.startswith(("messages_fts", "sqlite_")) or "_fts" in name:
            continue
        columns = {c["name"] for c in db.query(f"PRAGMA table_info({name})")}
        assert "user_id" in columns, f"table {name} has no user_id"


def test_transaction_rolls_back_on_error(open_db):
    db = open_db()
    db.execute("CREATE TABLE t (x INTEGER UNIQUE)")
    with pytest.raises(DatabaseError, match="UNIQUE"), db.transaction():
        db.execute("INSERT INTO t VALUES (1)")
        db.execute("INSERT INTO t VALUES (1)")
    assert db.scalar("SELECT count(*) FROM t") == 0


def test_a_closed_database_refuses_with_a_python_error(open_db):
    """Work that outlives its store gets DatabaseClosed, an Exception its caller's handlers see;
    libsql's own closed connection panics instead (a BaseException that kills the thread)."""
    db = open_db()
    db.execute("CREATE TABLE t (x INTEGER)")
    db.close()
    with pytest.raises(DatabaseClosed, match="closed"):
        db.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(DatabaseClosed), db.transaction():
        pass
    with pytest.raises(DatabaseClosed):
        db.executescript("INSERT INTO t VALUES (2);")
    db.close()  # twice: still fine


def test_nested_transaction_joins_outer(open_db):
    db = open_db()
    db.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(RuntimeError), db.transaction():
        db.execute("INSERT INTO t VALUES (1)")
        with db.transaction():
            db.execute("INSERT INTO t VALUES (2)")
        raise RuntimeError("abort outer")
    assert db.scalar("SELECT count(*) FROM t") == 0


def _increment(url: str, token: str | None, times: int) -> None:
    db = Database(url, token)
    for _ in range(times):
        with db.transaction():
            value = db.scalar("SELECT n FROM counter")
            db.execute("UPDATE counter SET n = ?", (value + 1,))


def test_processes_do_not_lose_updates(open_db, db_url):
    db = open_db()
    db.execute("CREATE TABLE counter (n INTEGER)")
    db.execute("INSERT INTO counter VALUES (0)")
    ctx = multiprocessing.get_context("spawn")
    token = os.environ.get("IRIS_DB_AUTH_TOKEN")
    procs = [ctx.Process(target=_increment, args=(db_url, token, 50)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert db.scalar("SELECT n FROM counter") == 150


def test_threads_share_one_connection_safely(open_db):
    import threading

    db = open_db()
    db.execute("CREATE TABLE counter (n INTEGER)")
    db.execute("INSERT INTO counter VALUES (0)")

    def bump():
        for _ in range(100):
            with db.transaction():
                db.execute("UPDATE counter SET n = ?", (db.scalar("SELECT n FROM counter") + 1,))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db.scalar("SELECT n FROM counter") == 400


def test_unopenable_database_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(DatabaseError, match="cannot open database"):
        Database(f"file:{blocker / 'sub' / 'a.db'}")
