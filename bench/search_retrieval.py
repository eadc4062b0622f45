"""Retrieval quality of session search on generated multi-session histories.

Users × sessions of everyday conversations (see bench/_conversations.py, fixed seed) are
imported through the same path as `iris sessions import`; each question (a fact stated in
passing, asked about later in other words; facts that changed are asked about "now") is run
through the ranking the tool, CLI and API use: words only (lexical), and words fused with
semantic neighbours (hybrid) with message vectors from the full encoder and from the static
(distilled) one. Prints recall@1/5/10 at turn level (the evidence turn among the top-k hits) and
session level (the evidence session among the sessions of the top-k hits, and among the top-k
distinct sessions). `--set handwritten` runs the hand-written held-out-style set instead
(bench/_memory_set.py: written apart from the generator, not used for tuning). `--set chitchat`
runs real two-person chats with questions written before any ranking (bench/_recall_eval.py),
dev next to held-out.

Run: .venv/bin/python bench/search_retrieval.py [--users 20] [--sessions 20] [--seed 7]
         [--modes lexical,full,static] [--set generated|handwritten|chitchat] [--home DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from _common import summary

if TYPE_CHECKING:
    import _conversations
    import _memory_set

KS = (1, 5, 10)


def evaluate(store, report, questions, *, semantic: bool, show_misses: int) -> None:
    from core.search.engine import search_messages

    turn = dict.fromkeys(KS, 0)
    sess_hits = dict.fromkeys(KS, 0)
    sess_distinct = dict.fromkeys(KS, 0)
    by_kind: dict[str, list[int]] = {}
    latencies = []
    misses = []
    for q in questions:
        user_id = report.users[q.user]
        t0 = time.perf_counter()
        hits = search_messages(store, user_id, q.text, limit=50, semantic=semantic)
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
    print("  turn level      " + "  ".join(f"R@{k} {turn[k] / n:.3f}" for k in KS))
    print("  session (hits)  " + "  ".join(f"R@{k} {sess_hits[k] / n:.3f}" for k in KS))
    print("  session (dist.) " + "  ".join(f"R@{k} {sess_distinct[k] / n:.3f}" for k in KS))
    for kind, values in sorted(by_kind.items()):
        print(f"    turn R@5 for {kind} questions: {sum(values) / len(values):.3f} "
              f"(n={len(values)})")
    print(f"  search latency: {summary(latencies)}")
    for q, top in misses[:show_misses]:
        print(f"\n  MISS {q.text!r} -> {q.turn_id}")
        for h in top:
            print(f"     {h.score:.3f} {h.external_id} {h.signals}: {h.snippet[:110]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--modes", default="lexical,full,static")
    parser.add_argument("--set", dest="which",
                        choices=["generated", "handwritten", "chitchat"], default="generated")
    parser.add_argument("--home", help="keep the database (and vectors) here between runs")
    parser.add_argument("--without", default="",
                        help="chitchat: switch off ranking ingredients (dates, speakers, person, "
                             "recency, coverage, trigram)")
    parser.add_argument("--split", choices=["dev", "held-out", "fresh"],
                        help="chitchat: show misses of this split only (fresh: only with this)")
    parser.add_argument("--show-misses", type=int, default=0)
    args = parser.parse_args()
    os.environ["IRIS_HOME"] = args.home or tempfile.mkdtemp(prefix="iris-retrieval-")
    os.environ.setdefault("IRIS_EMBED_CACHE", str(Path.home() / ".cache" / "iris-models"))

    from core.config import load_settings
    from core.search import embed
    from core.sessions.transfer import import_sessions, read_lines
    from core.store import open_store

    if args.which == "chitchat":
        from _recall_eval import run, switch_off

        switch_off([p for p in args.without.split(",") if p])
        modes = args.modes.split(",") if args.modes != "lexical,full,static" else \
            ["lexical", "full"]
        run(open_store(load_settings()), modes, args.show_misses, args.split)
        return
    # the generated and the hand-written sets each have their own (same-shaped) Question
    questions: list[_conversations.Question] | list[_memory_set.Question]
    if args.which == "generated":
        from _conversations import generate

        histories = generate(args.users, args.sessions, args.seed)
        lines = [json.dumps(s) for h in histories for s in h.sessions]
        questions = [q for h in histories for q in h.questions]
        label = f"{args.users} users x {args.sessions} sessions (seed {args.seed})"
    else:
        from _memory_set import build

        sessions, questions = build()
        lines = [json.dumps(s) for s in sessions]
        label = f"hand-written set: {len(sessions)} sessions, " \
                f"{len({s['user'] for s in sessions})} users"
    store = open_store(load_settings())
    started = time.perf_counter()
    report = import_sessions(store, read_lines(lines))
    print(f"imported {report.sessions} sessions, {report.messages} messages for "
          f"{len(report.users)} users in {time.perf_counter() - started:.1f} s")
    print(f"{len(questions)} questions over {label}")
    for mode in args.modes.split(","):
        if mode != "lexical":
            model = embed.FULL if mode == "full" else embed.STATIC
            store.vectors.db.execute("DELETE FROM message_vectors")
            started = time.perf_counter()
            count = sum(embed.backfill(store, uid, model=model) for uid in report.users.values())
            took = time.perf_counter() - started
            print(f"\n{mode}: embedded {count} messages in {took:.1f} s "
                  f"({count / max(took, 1e-9):,.0f} messages/s)")
        print(f"[{mode if mode == 'lexical' else 'hybrid, ' + mode + ' vectors'}]")
        evaluate(store, report, questions, semantic=mode != "lexical",
                 show_misses=args.show_misses)


if __name__ == "__main__":
    main()
