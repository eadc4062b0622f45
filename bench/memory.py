"""Memory: scanner rates through the memory tool, write latency (scan + compare-and-set commit,
with overflow), snapshot rendering, archive search with many archived entries, and the time an
account-link merge holds the database.

Writes go through ``Toolset.call`` exactly as the turn loop calls the ``memory`` tool, on a
real libSQL file.

Run: .venv/bin/python bench/memory.py [--writes 500] [--archived 20000] [--merge-messages 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time

from _common import ROOT, summary

CORPORA = {
    "memory corpus (tests/core/memory/corpus)": ROOT / "tests/core/memory/corpus",
    "security corpus, text entries (tests/core/security/corpus)":
        ROOT / "tests/core/security/corpus",
}


def load(folder, name):
    lines = (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines if line.strip()]
    return [e for e in entries if e.get("kind") != "script"
            and e.get("category") != "dangerous_command"]


def tool_writer(store, settings, user_id):
    from core.contracts.toolkit import ToolContext, Toolset
    from core.messages import ToolCall
    from core.tools.memory import Memory
    from core.turn.services import standalone_services

    tools = Toolset([Memory()])
    ctx = ToolContext(store=store, settings=settings,
                      services=standalone_services(settings, store),
                      user_id=user_id, session_id="ses_bench",
                      chat_key="http:bench", platform="http", account="http:bench")

    def write(arguments: dict) -> str:
        call = ToolCall(id="c", name="memory", arguments=json.dumps(arguments))
        return asyncio.run(tools.call(ctx, call)).content

    return write


def rates(store, settings) -> None:
    wide = settings.model_copy(update={"memory_limit_chars": 1_000_000})
    for label, folder in CORPORA.items():
        user = store.users.for_account(f"http:rates{abs(hash(label)) % 10_000}")
        write = tool_writer(store, wide, user)
        bad, good = load(folder, "malicious"), load(folder, "benign")
        missed = [e for e in bad if not write({"action": "add", "content": e["text"]})
                  .startswith("Error:")]
        refused = [e for e in good if write({"action": "add", "content": e["text"]})
                   .startswith("Error:")]
        print(f"{label}:")
        print(f"  blocked {len(bad) - len(missed)}/{len(bad)} = "
              f"{(len(bad) - len(missed)) / len(bad):.1%}")
        print(f"  benign refused {len(refused)}/{len(good)} = {len(refused) / len(good):.1%}")
        for entry in missed:
            print(f"    missed [{entry['category']}]: {entry['text'][:80]!r}")
        for entry in refused:
            print(f"    refused ({entry.get('note')}): {entry['text'][:80]!r}")


def writes(store, settings, count: int) -> None:
    user = store.users.for_account("http:writer")
    write = tool_writer(store, settings, user)
    samples = []
    words = ["deploy", "postgres", "staging", "backup", "modal", "telegram", "cron", "vim"]
    for i in range(count):
        text = (f"Fact {i}: the {random.choice(words)} setup uses port {10000 + i} "
                f"and {random.choice(words)} runs nightly")
        started = time.perf_counter()
        reply = write({"action": "add", "content": text})
        samples.append(time.perf_counter() - started)
        assert not reply.startswith("Error"), reply
    archived = store.memory.count_archive(user)
    print(f"memory tool add (scan + CAS commit, store full after ~40 adds): {summary(samples)}; "
          f"{archived} entries archived on overflow")


def snapshot(store, settings) -> None:
    from core.memory.book import Limits
    from core.memory.snapshot import render_snapshot

    user = store.users.for_account("http:writer")
    limits = Limits.from_settings(settings)
    samples = []
    for _ in range(200):
        started = time.perf_counter()
        text = render_snapshot(store, user, limits)
        samples.append(time.perf_counter() - started)
    print(f"snapshot section (both stores, every entry re-scanned, {len(text):,} chars): "
          f"{summary(samples)}")


def archive_search(store, archived: int) -> None:
    from core.ids import new_id

    users = [store.users.for_account(f"http:arch{u}") for u in range(20)]
    target = users[0]
    words = ["deploy", "postgres", "staging", "backup", "modal", "telegram", "cron", "vim",
             "kubernetes", "grafana", "redis", "nginx", "terraform", "ansible"]
    with store.db.transaction():
        for i in range(archived):
            user = users[i % len(users)]
            text = (f"Archived fact {i}: {random.choice(words)} and {random.choice(words)} on "
                    f"host h{i % 977}")
            store.db.execute(
                "INSERT INTO memory_archive (id, user_id, target, content, reason, archived_at)"
                " VALUES (?, ?, 'memory', ?, 'overflow', ?)",
                (new_id("arc"), user, text, store.clock.now() - i),
            )
    queries = ["postgres backup", "deploy staging nginx", "host h42", "redis", "terraform vim"]
    samples = []
    for _ in range(40):
        for query in queries:
            started = time.perf_counter()
            store.memory.search_archive(target, query, limit=10)
            samples.append(time.perf_counter() - started)
    print(f"search_archive over {archived // len(users):,} archived entries of one user "
          f"({archived:,} in the table): {summary(samples)}")


def merge(store, settings, messages: int) -> None:
    from core.identity.merge import merge_users
    from core.memory.book import Limits

    keep = store.users.for_account("telegram:900")
    other = store.users.for_account("slack:T9/U900")
    db = store.db
    per_session = 200
    with db.transaction():
        for s in range(messages // per_session):
            session = f"ses_merge_{s}"
            db.execute(
                "INSERT INTO sessions (id, user_id, chat_key, platform, started_at,"
                " last_active_at) VALUES (?, ?, 'slack:D1', 'slack', 0, 0)", (session, other))
            for m in range(per_session):
                db.execute(
                    "INSERT INTO messages (user_id, session_id, role, content, created_at)"
                    " VALUES (?, ?, ?, ?, 0)",
                    (other, session, "user" if m % 2 == 0 else "assistant",
                     f"message {m} of session {s} about deploys and backups"))
    started = time.perf_counter()
    report = merge_users(store, keep, other, limits=Limits.from_settings(settings), who="bench")
    elapsed = time.perf_counter() - started
    print(f"account link merge of a user with {report.rows.get('messages', 0):,} messages in "
          f"{report.rows.get('sessions', 0)} sessions (search index kept in step): "
          f"{elapsed * 1000:.0f} ms in one transaction")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--archived", type=int, default=20_000)
    parser.add_argument("--merge-messages", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["IRIS_HOME"] = home
        from core.config import load_settings
        from core.store import open_store

        settings = load_settings()
        store = open_store(settings)
        rates(store, settings)
        writes(store, settings, args.writes)
        snapshot(store, settings)
        archive_search(store, args.archived)
        merge(store, settings, args.merge_messages)
        store.close()


if __name__ == "__main__":
    main()
