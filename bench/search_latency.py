"""Search latency with 1 million messages across 1,000 users, on a real libSQL file.

Histories come from bench/_conversations.py (fixed seed). The bulk load drops the FTS triggers,
inserts with executemany in large transactions and re-indexes once (m004's ``rebuild``), then
restores the triggers, so the production write path stays trigger-synced; the trigger-synced
insert rate is measured separately. Queries are the generated questions plus short keyword and
identifier searches, for random users, through ``search_messages`` (what the tool, CLI and HTTP
API run).

Run: .venv/bin/python bench/search_latency.py [--users 1000] [--messages 1000000] [--queries 500]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import tempfile
import time

from _common import percentile, summary

KEYWORDS = ["physio knee", "0x", "index fund", "raised beds", "cabin anniversary", "V60",
            "ERR_CONN", "wedding", "book club", "commute", "tutor", "risotto", "half marathon"]


def load(store, users: int, target: int, seed: int) -> tuple[list[str], list[tuple[str, str]]]:
    from _conversations import generate

    from core.store.schema import m004_search

    db = store.db
    per_user_sessions = max(1, math.ceil(target / users / 12.0))
    m004_search.drop_triggers(db)
    user_ids: list[str] = []
    questions: list[tuple[str, str]] = []
    total = 0
    batch: list[tuple] = []
    started = time.perf_counter()

    def flush() -> None:
        with db.transaction():
            db._conn.executemany(
                "INSERT INTO messages (user_id, session_id, role, content, external_id,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?)", batch)
        batch.clear()

    for chunk in range(0, users, 50):
        histories = generate(min(50, users - chunk), per_user_sessions, seed + chunk)
        with db.transaction():
            for h in histories:
                tail = random.Random(f"{seed}{chunk}{h.user}").getrandbits(40)
                uid = f"usr_bench{chunk:04d}{h.user[-3:]}{tail:010x}"
                user_ids.append(uid)
                db.execute("INSERT INTO users (id, created_at) VALUES (?, 0)", (uid,))
                for s in h.sessions:
                    sid = f"{uid}:{s['session_id']}"
                    last = s["messages"][-1]["timestamp"] if s["messages"] else s["started_at"]
                    db.execute(
                        "INSERT INTO sessions (id, user_id, chat_key, platform, started_at,"
                        " last_active_at, ended_at, external_id) VALUES (?, ?, 'import',"
                        " 'import', ?, ?, ?, ?)",
                        (sid, uid, s["started_at"], last, last, s["session_id"]))
                    for m in s["messages"]:
                        batch.append((uid, sid, m["role"], m["content"], m["id"], m["timestamp"]))
                    total += len(s["messages"])
                questions.extend((uid, q.text) for q in h.questions)
        if len(batch) >= 100_000:
            flush()
    if batch:
        flush()
    inserted = time.perf_counter() - started
    started = time.perf_counter()
    with db.transaction():
        m004_search.rebuild(db)
        m004_search.create_triggers(db)
    indexed = time.perf_counter() - started
    for table in m004_search.FTS_TABLES:
        db.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    print(f"loaded {total:,} messages for {len(user_ids):,} users: insert {inserted:.1f} s, "
          f"index {indexed:.1f} s, optimize {time.perf_counter() - started - indexed:.1f} s")
    return user_ids, questions


def synthetic_vectors(store, dim: int = 384, seed: int = 5) -> None:
    import numpy as np

    from core.search.embed import FULL

    db = store.db
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    last = 0
    total = 0
    while True:
        rows = db.query("SELECT id, user_id FROM messages WHERE id > ? ORDER BY id LIMIT 100000",
                        (last,))
        if not rows:
            break
        blobs = rng.integers(-127, 128, size=(len(rows), dim), dtype=np.int8)
        with db.transaction():
            db._conn.executemany(
                "INSERT INTO message_vectors (user_id, message_id, model, chunk, vector,"
                " created_at) VALUES (?, ?, ?, 0, ?, 0)",
                [(r["user_id"], r["id"], FULL, blobs[i].tobytes()) for i, r in enumerate(rows)])
        last = rows[-1]["id"]
        total += len(rows)
    print(f"synthetic vectors for {total:,} messages in {time.perf_counter() - started:.1f} s")


def trigger_insert_rate(store, user_id: str, count: int = 5_000) -> float:
    from core.messages import Message

    session = store.sessions.start(user_id, "bench:rate", "http")
    messages = [Message(role="user", content=f"trigger synced message {i} about kayak rentals "
                        "and the weekend itinerary in Seville") for i in range(count)]
    started = time.perf_counter()
    with store.db.transaction():
        store.messages.insert(user_id, session.id, messages, at=time.time())
    return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--no-vectors", action="store_true", help="words-only figures")
    args = parser.parse_args()
    os.environ["IRIS_HOME"] = tempfile.mkdtemp(prefix="iris-latency-")

    from core.config import load_settings
    from core.search.engine import search_messages
    from core.store import open_store

    store = open_store(load_settings())
    user_ids, questions = load(store, args.users, args.messages, args.seed)
    size = sum(p.stat().st_size for p in (load_settings().home).glob("iris.db*"))
    print(f"database size {size / 1e9:.2f} GB")
    r = random.Random(args.seed)
    cases = [r.choice(questions) for _ in range(args.queries)]
    cases += [(r.choice(user_ids), r.choice(KEYWORDS)) for _ in range(args.queries // 2)]
    modes = [("words only", False)]
    if not args.no_vectors:
        synthetic_vectors(store)
        modes.append(("hybrid", True))
    for label, semantic in modes:
        for user_id, text in cases[:20]:
            search_messages(store, user_id, text, limit=10, semantic=semantic)
        latencies: dict[str, list[float]] = {"questions": [], "keywords": []}
        for i, (user_id, text) in enumerate(cases):
            started = time.perf_counter()
            search_messages(store, user_id, text, limit=10, semantic=semantic)
            latencies["questions" if i < args.queries else "keywords"].append(
                time.perf_counter() - started)
        both = latencies["questions"] + latencies["keywords"]
        print(f"[{label}]")
        print(f"  natural-language questions: {summary(latencies['questions'])}")
        print(f"  keywords and identifiers:   {summary(latencies['keywords'])}")
        print(f"  all searches: p50 {percentile(both, 50) * 1000:.1f} ms, "
              f"p99 {percentile(both, 99) * 1000:.1f} ms (target p50 <= 20 ms)")
    print(f"trigger-synced inserts: {trigger_insert_rate(store, user_ids[0]):,.0f} messages/s")


if __name__ == "__main__":
    main()
