"""Webhook reliability under load, and under crashes.

1. 1,000 webhook deliveries over 50 chats (25 Telegram, 25 Slack), 20% of them delivered a
   second time later, chats interleaved at random, 16 requests in flight: Iris on uvicorn with
   the emulator's in-process worker, an in-process model that answers at once, replies sent by
   the real client libraries to the fake platform APIs. Counts what the platforms received:
   lost / doubled / out-of-order replies (all must be 0) and turns per second.
2. ``--crash``: a worker process killed at each step of a turn (after lease, after the model
   call, after the tool, before commit, before delivery, after delivery), for each platform;
   after the lease expires the sweeper finishes the message: it must be done once and its reply
   received exactly once.

Run: .venv/bin/python bench/webhook_reliability.py [--messages 1000] [--chats 50] [--crash]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import _common  # noqa: F401  (puts the project on sys.path)


def load(messages: int, chats: int, repeat_share: float, concurrency: int) -> bool:
    from iris_testing.platform_stack import platform_stack
    from iris_testing.webhook_load import run

    with platform_stack(Path(tempfile.mkdtemp(prefix="iris-bench-"))) as stack:
        report = run(stack, messages=messages, chats=chats, repeat_share=repeat_share,
                     concurrency=concurrency, timeout=900)
    print(report.line())
    return (report.lost, report.doubled, report.out_of_order) == (0, 0, 0)


def crashes() -> bool:
    from iris_testing.crash_platform_worker import STEPS, crash_and_recover
    from iris_testing.platform_stack import platform_stack

    ok = True
    for platform in ("telegram", "slack"):
        for step in STEPS:
            with platform_stack(Path(tempfile.mkdtemp(prefix="iris-bench-"))) as stack:
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
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--repeat-share", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--crash", action="store_true", help="also run the crash grid")
    args = parser.parse_args()
    ok = load(args.messages, args.chats, args.repeat_share, args.concurrency)
    if args.crash:
        ok = crashes() and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
