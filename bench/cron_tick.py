"""Cron tick figures on a real libSQL file: an idle tick (nothing due, the usual minute), claiming
many due jobs in one tick, the same jobs claimed by two tick processes at once (each run must
happen once), and due jobs run end to end (claim → worker → turn with an in-process scripted
model → stored).

Run: .venv/bin/python bench/cron_tick.py [--jobs 1000] [--users 100] [--idle-ticks 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _common import ROOT, summary

from core.scheduler.jobs import CronJobs

START = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
DUE = START + timedelta(minutes=5)


class Recorder:
    def __init__(self) -> None:
        self.chats: list[object] = []

    async def drain(self, chat: object) -> None:
        self.chats.append(chat)


def runtime(dispatcher=None, model=None):
    """A runtime whose clock stands at START: jobs are made then, ticks say their own time."""
    from core.clock import ManualClock
    from core.config import load_settings
    from functions.dispatch import LocalDispatcher
    from functions.runtime import compose
    from iris_testing.scripted_model import FixedRouter, ScriptedModel

    return compose(load_settings(), clock=ManualClock(START),
                   dispatcher=dispatcher or LocalDispatcher(),
                   router=FixedRouter(model or ScriptedModel()))


def create_jobs(rt, jobs: int, users: int) -> None:
    from core.scheduler.manage import Actor, create_job

    async def go() -> None:
        for n in range(jobs):
            account = f"http:user{n % users}"
            user_id = rt.store.users.for_account(account)
            actor = Actor(user_id=user_id, account=account)
            await create_job(rt.store, rt.settings, actor, prompt=f"job {n}: say hi",
                             schedule="every 5m", name=f"job {n}", deliver="none")

    asyncio.run(go())


def child(go: str, ready: str) -> None:
    from functions.cron import tick

    rt = runtime(Recorder())
    CronJobs(rt.store).due(0.0)
    Path(ready).touch()
    while not Path(go).exists():
        time.sleep(0.0005)
    started = time.perf_counter()
    claimed = []
    while True:  # keep ticking until nothing is left to claim, as later ticks would
        report = asyncio.run(tick(rt, now=DUE))
        claimed += [c.run_id for c in report.claimed]
        if not report.claimed and not report.skipped:
            break
    print(json.dumps({"claimed": claimed, "seconds": time.perf_counter() - started}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--idle-ticks", type=int, default=200)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="iris-bench-cron-")
    os.environ["IRIS_HOME"] = home
    os.environ["IRIS_SESSION_TITLES"] = "false"
    os.environ["IRIS_MEMORY_REVIEW_EVERY"] = "0"
    from functions.cron import MAX_CLAIMS_PER_TICK, tick

    rt = runtime(Recorder())
    started = time.perf_counter()
    create_jobs(rt, args.jobs, args.users)
    made = time.perf_counter() - started
    print(f"created {args.jobs} jobs for {args.users} users in {made:.2f} s "
          f"({made / args.jobs * 1000:.2f} ms per job)")

    idle = []
    for _ in range(args.idle_ticks):
        t0 = time.perf_counter()
        asyncio.run(tick(rt, now=START + timedelta(minutes=1)))
        idle.append(time.perf_counter() - t0)
    print(f"idle tick ({args.jobs} jobs, none due): {summary(idle)}")

    os.environ["IRIS_HOME"] = tempfile.mkdtemp(prefix="iris-bench-cron-one-")
    one = runtime(Recorder())
    create_jobs(one, MAX_CLAIMS_PER_TICK, args.users)
    t0 = time.perf_counter()
    report = asyncio.run(tick(one, now=DUE))
    took = time.perf_counter() - t0
    print(f"one tick claiming {len(report.claimed)} due jobs in one process: {took:.2f} s "
          f"({took / len(report.claimed) * 1000:.2f} ms per claim)")
    one.store.close()
    os.environ["IRIS_HOME"] = home

    rt.close()
    go, ready = Path(home) / "go", [Path(home) / f"ready{i}" for i in range(2)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    children = [subprocess.Popen([sys.executable, __file__, "--child", str(go), str(r)],
                                 cwd=ROOT / "bench", env=env, stdout=subprocess.PIPE, text=True)
                for r in ready]
    while not all(r.exists() for r in ready):
        time.sleep(0.01)
    go.touch()
    results = [json.loads(c.communicate()[0].strip().splitlines()[-1]) for c in children]
    claims = [set(r["claimed"]) for r in results]
    rt = runtime(Recorder())
    runs = rt.store.db.scalar("SELECT count(*) FROM cron_runs")
    jobs_run = rt.store.db.scalar("SELECT count(DISTINCT job_id) FROM cron_runs")
    wall = max(r["seconds"] for r in results)
    print(f"two tick processes, {args.jobs} due jobs (at most {MAX_CLAIMS_PER_TICK} per tick): "
          f"claimed {len(claims[0])} + {len(claims[1])}, overlap {len(claims[0] & claims[1])}, "
          f"runs recorded {runs} for {jobs_run} jobs, {wall:.2f} s "
          f"({args.jobs / wall:.0f} claims/s together)")
    rt.close()

    from iris_testing.scripted_model import ScriptedModel

    os.environ["IRIS_HOME"] = tempfile.mkdtemp(prefix="iris-bench-cron-turns-")
    model = ScriptedModel().then(*["hi"] * args.turns)
    rt = runtime(model=model)
    create_jobs(rt, args.turns, max(1, args.turns // 10))

    async def run_all() -> float:
        t0 = time.perf_counter()
        await tick(rt, now=DUE)
        await rt.dispatcher.idle()
        return time.perf_counter() - t0

    seconds = asyncio.run(run_all())
    done = rt.store.db.scalar("SELECT count(*) FROM inbox WHERE platform = 'cron'"
                              " AND status = 'done'")
    print(f"end to end: {args.turns} due jobs claimed, run as turns (scripted model) and stored "
          f"in {seconds:.2f} s ({args.turns / seconds:.0f} runs/s, {done} done)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
