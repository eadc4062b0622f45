"""Recall on the real chats (bench/_chitchat.py, bench/_recall_questions.py): turn-level and
session-level recall@k, dev next to held-out and the fresh held-out set (bench/_recall_fresh.py,
written blind; its misses are shown only with ``--split fresh``), words only next to hybrid.
Each question is searched as of its own clock (``asked_at``), as the session_search tool would
be."""

from __future__ import annotations

import time
from datetime import UTC, tzinfo
from typing import Any

from _common import summary

KS = (1, 5, 10)


def evaluate(store: Any, users: dict[str, str], questions: list[Any], *, semantic: bool,
             show_misses: int, split: str | None = None) -> dict[str, dict[str, float]]:
    from core.search.engine import search_messages
    from core.sessions.transfer import parse_time

    table: dict[str, dict[str, float]] = {}
    latencies: list[float] = []
    misses = []
    kinds: dict[str, list[int]] = {}
    searched: dict[tuple[str, str, str], list[Any]] = {}
    parts = {"dev": lambda q: q.split == "dev",
             "dev-first": lambda q: q.split == "dev" and not q.pinned,
             "held-out": lambda q: q.split == "held-out",
             "fresh": lambda q: q.split == "fresh"}
    for part, keep in parts.items():
        chosen = [q for q in questions if keep(q)]
        turn = dict.fromkeys(KS, 0)
        sess = dict.fromkeys(KS, 0)
        for q in chosen:
            key = (q.user, q.text, q.asked_at)
            if key not in searched:
                t0 = time.perf_counter()
                searched[key] = search_messages(
                    store, users[q.user], q.text, limit=50, semantic=semantic,
                    now=parse_time(q.asked_at))
                latencies.append(time.perf_counter() - t0)
            hits = searched[key]
            turns = [h.external_id for h in hits]
            answer_sessions = {t.split("-")[0] for t in q.turns}
            for k in KS:
                turn[k] += any(t in q.turns for t in turns[:k])
                sess[k] += any(h.public_session_id in answer_sessions for h in hits[:k])
            found = any(t in q.turns for t in turns[:5])
            if part == "dev-first":
                continue
            kinds.setdefault(f"{q.kind} ({part})", []).append(int(found))
            shown = split == part or (split is None and part != "fresh")
            if not found and shown:
                misses.append((q, hits[:3]))
        n = max(1, len(chosen))
        table[part] = {f"turn@{k}": turn[k] / n for k in KS}
        table[part].update({f"session@{k}": sess[k] / n for k in KS})
        table[part]["n"] = len(chosen)
    for part in parts:
        row = table[part]
        print(f"  {part:9} n={int(row['n']):3}  turn " +
              " ".join(f"R@{k} {row[f'turn@{k}']:.3f}" for k in KS) + "   session " +
              " ".join(f"R@{k} {row[f'session@{k}']:.3f}" for k in KS))
    print("  turn R@5 by kind: " + ", ".join(
        f"{kind} {sum(v) / len(v):.2f}/{len(v)}" for kind, v in sorted(kinds.items())))
    print(f"  search latency: {summary(latencies)}")
    for q, top in misses[:show_misses]:
        print(f"\n  MISS [{q.split} {q.kind}] {q.text!r} -> {', '.join(q.turns)}")
        for h in top:
            print(f"     {h.score:.3f} {h.external_id} {h.signals}: {h.content[:110]!r}")
    return table


SWITCHES = ("dates", "speakers", "person", "recency",
            "coverage", "trigram")


def switch_off(parts: list[str]) -> None:
    """Run without some ranking ingredients, to see what each is worth on held-out."""
    from core.search import context, dates, engine, hybrid

    def no_dates(text: str, now: float, zone: tzinfo = UTC) -> None:
        return None  # the engine passes the user's zone when it is not UTC

    for part in parts:
        if part == "dates":
            dates.resolve = no_dates
        elif part == "speakers":
            context.named_speaker = lambda store, user_id, text: None
        elif part == "person":  # "what did I say…" lifts the user's turns (words and meaning)
            engine.PERSON_WEIGHT = hybrid.PERSON_WEIGHT = 0.0
        elif part == "recency":
            engine.RECENCY_WEIGHT = 0.0
        elif part == "coverage":  # a message with more of the query's words goes first
            engine.COVERAGE_WEIGHT = 0.0
        elif part == "trigram":  # substrings (BM25 on the trigram table)
            engine.TRIGRAM_WEIGHT = 0.0
        else:
            raise SystemExit(f"--without: unknown part {part!r} ({', '.join(SWITCHES)})")


def check_turns(questions: list[Any], chats: list[dict[str, Any]]) -> None:
    """Every answer turn of every question is a message imported for that question's user."""
    owner = {m["id"]: chat["user"] for chat in chats for m in chat["messages"]}
    wrong = [f"{q.user} {q.text!r}: {t}" for q in questions for t in q.turns
             if owner.get(t) != q.user]
    if wrong:
        raise SystemExit("answer turns that are not imported messages of the asking user:\n  "
                         + "\n  ".join(wrong))


def run(store: Any, modes: list[str], show_misses: int, split: str | None,
        extra: bool = True) -> None:
    import json

    from _chitchat import sessions
    from _recall_dev_extra import DEV_EXTRA
    from _recall_fresh import FRESH
    from _recall_questions import QUESTIONS

    from core.search import embed
    from core.sessions.transfer import import_sessions, read_lines

    questions = [*QUESTIONS, *DEV_EXTRA, *FRESH] if extra else QUESTIONS
    chats = sessions()
    check_turns(questions, chats)
    lines = [json.dumps(s) for s in chats]
    started = time.perf_counter()
    report = import_sessions(store, read_lines(lines))
    print(f"imported {report.sessions} sessions ({report.skipped} already there), "
          f"{report.messages} messages for {len(report.users)} users "
          f"in {time.perf_counter() - started:.1f} s")
    print(f"{len(questions)} questions over real chats (chitchat-dataset), "
          f"{sum(q.split == 'dev' for q in questions)} dev / "
          f"{sum(q.split == 'held-out' for q in questions)} held-out / "
          f"{sum(q.split == 'fresh' for q in questions)} fresh")
    users = report.users
    for mode in modes:
        if mode != "lexical":
            model = embed.FULL if mode == "full" else embed.STATIC
            started = time.perf_counter()
            count = sum(embed.backfill(store, uid, model=model) for uid in users.values())
            took = time.perf_counter() - started
            print(f"\n{mode}: embedded {count} messages in {took:.1f} s")
        print(f"[{'words only' if mode == 'lexical' else 'hybrid, ' + mode + ' vectors'}]")
        evaluate(store, users, questions, semantic=mode != "lexical",
                 show_misses=show_misses, split=split)
