"""How long ``iris import-hermes`` takes on a large Hermes home.

Builds a ``state.db`` with Hermes' schema (v30 DDL from iris_testing/hermes_home.py) holding
``--messages`` messages (default 100,000) in sessions of 8–16 turns on Telegram, the CLI and a
Telegram group, every tenth one compressed into a child, with tool calls; texts from
bench/_conversations.py (fixed seed). Then imports it into a fresh Iris store (a real libSQL
file) three ways: words only (``--embed none``), static vectors (``fast``) and, on a sample, the
full model (``full``, whose rate is extrapolated to the whole home: at ~30 messages/s on this
machine it is the part that dominates). Prints the import phases and messages/s; progress goes
to stderr.

Run: .venv/bin/python bench/hermes_import.py [--messages 100000] [--full-sample 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _conversations import generate  # noqa: E402


def build_state(path: Path, messages: int, seed: int = 11) -> int:
    from iris_testing.hermes_home import StateWriter, tool_call

    writer = StateWriter(path)
    r = random.Random(seed)
    written = sessions = 0
    start = datetime(2026, 1, 1, tzinfo=UTC)
    users = generate(users=max(1, messages // 4000), sessions=40, seed=seed)
    pool = [s for u in users for s in u.sessions]
    while written < messages:
        template = pool[sessions % len(pool)]
        sid = f"2026_{sessions:06d}"
        kind = sessions % 10
        source, chat, chat_type = (("cli", None, None) if kind == 3 else
                                   ("telegram", "-100777", "supergroup") if kind == 5 else
                                   ("telegram", "4242", "dm"))
        at = start + timedelta(hours=sessions)
        parent = f"2026_{sessions - 1:06d}" if kind == 1 else None
        writer.session(sid, source, at, user_id="4242" if source == "telegram" else None,
                       chat_id=chat, chat_type=chat_type, parent_session_id=parent,
                       ended_at=at + timedelta(minutes=50), end_reason="compression"
                       if kind == 0 else "idle", title=f"Session {sessions}",
                       input_tokens=1000, output_tokens=200, actual_cost_usd=0.01,
                       api_call_count=4)
        for i, m in enumerate(template["messages"]):
            if written >= messages:
                break
            when = at + timedelta(seconds=20 * i)
            if i == 3 and r.random() < 0.5:
                writer.message(sid, "assistant", None, when,
                               tool_calls=tool_call(f"c{sessions}", "terminal", {"command": "ls"}))
                writer.message(sid, "tool", "README.md\nsrc\n", when, tool_call_id=f"c{sessions}",
                               tool_name="terminal")
                written += 2
            writer.message(sid, m["role"], m["content"], when)
            written += 1
        sessions += 1
        if sessions % 500 == 0:
            writer.conn.commit()
    writer.close()
    return sessions


def run(home: Path, embed: str, progress: bool) -> tuple[float, dict]:
    from core.config import load_settings
    from core.migrate.hermes import import_hermes
    from core.store import open_store

    iris_home = Path(tempfile.mkdtemp(prefix="iris-bench-"))
    os.environ["IRIS_HOME"] = str(iris_home)
    settings = load_settings()
    store = open_store(settings)
    user = store.users.for_account("telegram:4242")

    def show(what: str, done: int, total: int) -> None:
        if progress and (done == total or done % 5000 < 400):
            print(f"\r  [{embed}] {what}: {done:,}/{total:,}", end="", file=sys.stderr,
                  flush=True)

    started = time.perf_counter()
    report = import_hermes(store, settings, user, home, embed=embed, progress=show)
    seconds = time.perf_counter() - started
    if progress:
        print(file=sys.stderr)
    counts = dict(report["sessions"].counts)
    store.close()
    return seconds, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--full-sample", type=int, default=2_000,
                        help="messages imported with the full model to measure its rate")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    home = root / ".hermes"
    home.mkdir()
    started = time.perf_counter()
    sessions = build_state(home / "state.db", args.messages)
    print(f"built state.db: {args.messages:,} messages in {sessions:,} sessions "
          f"({(home / 'state.db').stat().st_size / 1e6:.0f} MB) in "
          f"{time.perf_counter() - started:.1f} s")
    results = {}
    for embed in ("none", "fast"):
        seconds, counts = run(home, embed, not args.quiet)
        results[embed] = seconds
        print(f"--embed {embed}: {seconds:.1f} s ({args.messages / seconds:,.0f} messages/s); "
              f"{json.dumps(counts, sort_keys=True)}")
    sample_home = root / "sample" / ".hermes"
    sample_home.mkdir(parents=True)
    build_state(sample_home / "state.db", args.full_sample)
    seconds, _ = run(sample_home, "full", not args.quiet)
    words, _ = run(sample_home, "none", False)
    rate = args.full_sample / max(seconds - words, 1e-6)
    estimate = results["none"] + args.messages / rate
    print(f"--embed full: {rate:,.0f} messages/s for the vectors on a {args.full_sample:,}-message "
          f"sample; the whole home would take about {estimate / 60:.0f} min "
          f"(words {results['none']:.0f} s + vectors {args.messages / rate / 60:.0f} min)")


if __name__ == "__main__":
    main()
