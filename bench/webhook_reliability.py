"""Webhook reliability under load, and under crashes.

1. 1,000 webhook deliveries over 70 chats (7 each on the ten platforms: Telegram, Slack,
   WhatsApp, Discord, email, LINE, SMS, Matrix, Microsoft Teams and Google Chat), 20% of them
   delivered a second time later, chats interleaved at random, 16 requests in flight: Iris on
   uvicorn with the emulator's in-process worker, an in-process model that answers at once,
   replies sent by Iris' real senders to the fake platform APIs and the SMTP server. Counts
   what the platforms received: lost / doubled / out-of-order replies (all must be 0) and
   turns per second.
2. ``--crash``: a worker process killed at each step of a turn (after lease, after the model
   call, after the tool, before commit, before delivery, after delivery), for each platform;
   after the lease expires the sweeper finishes the message: it must be done once and its reply
   received exactly once. All ten platforms × six steps.

3. ``--remote-db``: the load run again with the database behind the Hrana test server
   (tests/fakes/hrana_server.py, a child process on loopback: libSQL's remote protocol, as Iris
   talks to Turso), printed next to the file-database run with the server's round trips;
   ``--db-faults 0.03`` also answers that share of the round trips 503 before running them.

Run: .venv/bin/python bench/webhook_reliability.py [--messages 1000] [--chats 70] [--crash]
     [--remote-db [--db-faults RATE]]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import _common  # puts the project on sys.path
import httpx

HRANA_TOKEN = "bench-token"


def load(messages: int, chats: int, repeat_share: float, concurrency: int,
         label: str = "file database", **env: str) -> bool:
    from core.clock import SYSTEM_CLOCK
    from iris_testing.platform_stack import platform_stack
    from iris_testing.webhook_load import JWT_PLATFORMS, PLATFORMS, run

    # clock named (its default): otherwise mypy matches env's str values against it
    with platform_stack(Path(tempfile.mkdtemp(prefix="iris-bench-")), clock=SYSTEM_CLOCK,
                        sweep_seconds=2.0, jwt_platforms=True, **env) as stack:
        report = run(stack, messages=messages, chats=chats, repeat_share=repeat_share,
                     concurrency=concurrency, timeout=900,
                     platforms=PLATFORMS + JWT_PLATFORMS)
        counters = stack.rt.store.db.remote_counters()
    print(f"{label}: {report.line()}")
    if counters:
        print(f"  store: {counters}")
    return (report.lost, report.doubled, report.out_of_order) == (0, 0, 0)


@contextmanager
def hrana(directory: Path, log: str | None = None,
          options: tuple[str, ...] = ()) -> Iterator[str]:
    """The Hrana test server as a child process (``options``: more of its flags); yields its
    base URL."""
    extra = ["--log", log] if log else []
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.hrana_server", "--port", "0", "--dir",
         str(directory), "--token", HRANA_TOKEN, *extra, *options], cwd=_common.ROOT,
        stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.startswith("hrana listening on "):
            raise SystemExit(f"the Hrana server did not start: {line!r}")
        yield line.removeprefix("hrana listening on ").strip()
    finally:
        server.terminate()
        server.wait(10)


def remote(messages: int, chats: int, repeat_share: float, concurrency: int,
           faults: float) -> bool:
    with hrana(Path(tempfile.mkdtemp(prefix="iris-hrana-"))) as url:
        rules = [{"kind": "fail", "rate": faults, "status": 503}] if faults else []
        httpx.post(f"{url}/_fake/faults", json={"rules": rules, "seed": 1}).raise_for_status()
        label = f"Hrana server, {faults:.0%} 503s" if faults else "Hrana server"
        ok = load(messages, chats, repeat_share, concurrency, label,
                  IRIS_DB_URL=f"{url}/db/bench", IRIS_DB_AUTH_TOKEN=HRANA_TOKEN)
        stats = httpx.get(f"{url}/_fake/stats").json()
    trips = stats.get("round_trips", 0)
    print(f"  server: {trips} round trips ({trips / messages:.0f} per message), "
          f"{stats.get('statements', 0)} statements, {stats.get('fault_fail', 0)} answered 503")
    return ok


def crashes() -> bool:
    from iris_testing.crash_platform_worker import STEPS, crash_and_recover
    from iris_testing.platform_stack import platform_stack
    from iris_testing.webhook_load import JWT_PLATFORMS, PLATFORMS

    ok = True
    for platform in PLATFORMS + JWT_PLATFORMS:
        for step in STEPS:
            with platform_stack(Path(tempfile.mkdtemp(prefix="iris-bench-")),
                                jwt_platforms=platform in JWT_PLATFORMS) as stack:
                result = crash_and_recover(stack, step, platform)
            once = result.status == "done" and len(result.sent) == 1 and result.deliveries == 1
            ok = ok and once
            print(f"killed {step:<15} {platform:<8}: entry {result.status}, "
                  f"replies received {len(result.sent)} ({result.sent[0] if result.sent else '-'}"
                  f"), delivery {result.delivery_status} -> {'ok' if once else 'FAILED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--chats", type=int, default=70)
    parser.add_argument("--repeat-share", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--crash", action="store_true", help="also run the crash grid")
    parser.add_argument("--remote-db", action="store_true",
                        help="also run the load through the Hrana test server")
    parser.add_argument("--db-faults", type=float, default=0.0,
                        help="with --remote-db: share of round trips answered 503")
    args = parser.parse_args()
    ok = load(args.messages, args.chats, args.repeat_share, args.concurrency)
    if args.remote_db:
        ok = remote(args.messages, args.chats, args.repeat_share, args.concurrency,
                    args.db_faults) and ok
    if args.crash:
        ok = crashes() and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
