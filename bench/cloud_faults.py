"""The cloud path's fault table (issue 18): each fault injected through real HTTP and the real
client libraries, and what became of the turns it hit.

- the database connection dropped mid-transaction and on COMMIT (the Hrana test server, a child
  process on loopback, drops it before or after running the request: unknown outcome);
- S3 answering 503 SlowDown, and PUTs that run but whose answer never arrives (moto's server
  behind iris_testing/fault_proxy.py; boto3 times out after 1 s);
- Telegram answering 429 with ``parameters.retry_after``, Slack answering HTTP 429
  ``ratelimited`` with ``Retry-After`` (every reply's first send);
- the model provider answering 529 overloaded and stalling mid-answer (the scripted
  OpenAI-compatible server, through litellm);
- the Modal worker spawn refused (the dispatcher's Modal fake);
- ``iris dev`` (a subprocess) killed with SIGKILL while 50 Telegram chats are mid-turn and 5
  cron runs are due, then restarted (iris_testing/kill_dev.py).

Counts at the far end: answered once, told plainly that it failed, lost, doubled, finished by
the sweeper, the turns' model calls. The runs live in iris_testing/fault_runs*.py (the tests
run them smaller).

Run: .venv/bin/python bench/cloud_faults.py [--turns 30] [--only db,s3,platforms,model,modal,kill]
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401 (puts the project on sys.path)
from webhook_reliability import HRANA_TOKEN, hrana


def home() -> Path:
    return Path(tempfile.mkdtemp(prefix="iris-faults-")) / "home"


def kill():
    """``iris dev`` SIGKILLed with 50 chats mid-turn and 5 cron runs due, then restarted."""
    from iris_testing.fault_runs import FaultOutcome
    from iris_testing.kill_dev import kill_and_restart

    report = kill_and_restart(home(), Path(tempfile.mkdtemp(prefix="iris-kill-")))
    reruns = sum(r["attempts"] - 1 for r in report.inbox)
    return FaultOutcome(
        "`iris dev` SIGKILLed mid-turn (50 chats, 5 cron runs due), restarted",
        1, len(report.expected), report.answered_once, report.lost, report.doubled, 0,
        swept=len(report.mid_turn), model_calls=sum(report.model_calls.values()),
        detail=f"{len(report.mid_turn)} turns interrupted, {reruns} turns run again; "
        f"{len(report.runs)} cron runs; all answered {report.recovery_seconds:.0f} s after the "
        "restart (lease 30 s)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--only", default="db,s3,platforms,model,modal,kill")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # the faults are logged as they happen
    wanted, turns = set(args.only.split(",")), args.turns
    from iris_testing.fault_runs import FaultOutcome, db_drops, s3_faults
    from iris_testing.fault_runs_platforms import modal_spawn, model_faults, platform_rate_limit

    outcomes: list[tuple[FaultOutcome, float]] = []

    def timed(run) -> None:
        started = time.perf_counter()
        outcome = run()
        outcomes.append((outcome, time.perf_counter() - started))
        print(f"{outcome.row()} {outcome.detail}", flush=True)

    print(FaultOutcome.HEADER)
    print("|---|---|---|---|---|---|---|---|---|")
    if "db" in wanted:
        # streams idle for 5 s expire, as in the tests: an orphaned transaction holds the
        # write lock until then
        with hrana(Path(tempfile.mkdtemp(prefix="iris-hrana-")),
                   options=("--stream-ttl", "5")) as url:
            for n, where in enumerate(("transaction", "commit")):
                timed(lambda where=where, n=n: db_drops(
                    home(), url, f"{url}/db/faults{n}", HRANA_TOKEN, where=where, turns=turns,
                    rate=0.1))
    if "s3" in wanted:
        from moto.server import ThreadedMotoServer

        os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                          AWS_DEFAULT_REGION="us-east-1")
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            import boto3

            boto3.client("s3", endpoint_url=f"http://{host}:{port}").create_bucket(
                Bucket="iris-faults")
            timed(lambda: s3_faults(home(), f"http://{host}:{port}", "iris-faults",
                                    turns=turns, rate=0.2))
        finally:
            server.stop()
    if "platforms" in wanted:
        for platform in ("telegram", "slack"):
            timed(lambda platform=platform: platform_rate_limit(home(), platform, turns=turns))
    if "model" in wanted:
        timed(lambda: model_faults(home(), turns=turns, rate=0.2))
    if "modal" in wanted:
        timed(lambda: modal_spawn(home(), turns=turns, failing=max(1, turns // 4)))
    if "kill" in wanted:
        timed(kill)
    print()
    for outcome, seconds in outcomes:
        print(f"{outcome.fault}: {seconds:.1f} s, {'ok' if outcome.ok else 'FAILED'}")
    return 0 if all(outcome.ok for outcome, _ in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
