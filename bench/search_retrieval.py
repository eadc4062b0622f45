"""Retrieval quality of session search on generated multi-session histories.

Users × sessions of everyday conversations (see bench/_conversations.py, fixed seed) are
imported through the same path as `iris sessions import`; each question (a fact stated in
passing, asked about later in other words; facts that changed are asked about "now") is run
through the ranking the tool, CLI and API use. Prints recall@1/5/10 at turn level (the evidence
turn among the top-k hits) and session level (the evidence session among the sessions of the
top-k hits, and among the top-k distinct sessions).

Run: .venv/bin/python bench/search_retrieval.py [--users 20] [--sessions 20] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from _common import summary

KS = (1, 5, 10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show-misses", type=int, default=0)
    args = parser.parse_args()
    os.environ["IRIS_HOME"] = tempfile.mkdtemp(prefix="iris-retrieval-")

    from _conversations import generate

    from core.config import load_settings
    from core.search.engine import search_messages
    from core.sessions.transfer import import_sessions, read_lines
    from core.store import open_store

    histories = generate(args.users, args.sessions, args.seed)
    store = open_store(load_settings())
    lines = [json.dumps(s) for h in histories for s in h.sessions]
    started = time.perf_counter()
    report = import_sessions(store, read_lines(lines))
    print(f"imported {report.sessions} sessions, {report.messages} messages for "
          f"{len(report.users)} users in {time.perf_counter() - started:.1f} s")

    questions = [q for h in histories for q in h.questions]
    turn = dict.fromkeys(KS, 0)
    sess_hits = dict.fromkeys(KS, 0)
    sess_distinct = dict.fromkeys(KS, 0)
    by_kind: dict[str, list[int]] = {}
    latencies = []
    misses = []
    for q in questions:
        user_id = report.users[q.user]
        t0 = time.perf_counter()
        hits = search_messages(store, user_id, q.text, limit=50)
        latencies.append(time.perf_counter() - t0)
        turns = [h.external_id for h in hits]
        sessions = [h.public_session_id for h in hits]
        distinct = list(dict.fromkeys(sessions))
        for k in KS:
            turn[k] += q.turn_id in turns[:k]
            sess_hits[k] += q.session_id in sessions[:k]
            sess_distinct[k] += q.session_id in distinct[:k]
        by_kind.setdefault(q.kind, []).append(int(q.turn_id in turns[:5]))
        if q.turn_id not in turns[:5]:
            misses.append((q, hits[:3]))
    n = len(questions)
    print(f"{n} questions over {args.users} users x {args.sessions} sessions (seed {args.seed})")
    print("turn level      " + "  ".join(f"R@{k} {turn[k] / n:.3f}" for k in KS))
    print("session (hits)  " + "  ".join(f"R@{k} {sess_hits[k] / n:.3f}" for k in KS))
    print("session (dist.) " + "  ".join(f"R@{k} {sess_distinct[k] / n:.3f}" for k in KS))
    for kind, values in sorted(by_kind.items()):
        print(f"  turn R@5 for {kind} questions: {sum(values) / len(values):.3f} (n={len(values)})")
    print(f"search latency: {summary(latencies)}")
    for q, top in misses[: args.show_misses]:
        print(f"\nMISS {q.text!r} -> {q.turn_id}")
        for h in top:
            print(f"   {h.score:.3f} {h.external_id}: {h.snippet[:120]}")


if __name__ == "__main__":
    main()
