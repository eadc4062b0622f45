"""One cron tick in a child process, started on a signal so two children tick at the same moment.
Prints the run ids it claimed as JSON. Dispatch is recorded, not run: the claim is under test."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime
from pathlib import Path

from core.clock import ManualClock
from core.config import load_settings
from core.scheduler.jobs import CronJobs
from functions.cron import tick
from functions.runtime import compose
from iris_testing.scripted_model import FixedRouter, ScriptedModel
from iris_testing.waiting import wait_until


class RecordingDispatcher:
    def __init__(self) -> None:
        self.chats: list[object] = []

    async def drain(self, chat: object) -> None:
        self.chats.append(chat)


def main(at: str, ready: str, go: str) -> None:
    settings = load_settings()
    rt = compose(settings, clock=ManualClock(datetime.fromisoformat(at)),
                 dispatcher=RecordingDispatcher(), router=FixedRouter(ScriptedModel()))
    CronJobs(rt.store).due(0.0)  # warm up: open the database, import the scheduler
    Path(ready).touch()
    wait_until(Path(go).exists, "the go signal")
    report = asyncio.run(tick(rt))
    print(json.dumps({"claimed": [c.run_id for c in report.claimed],
                      "skipped": report.skipped, "errors": report.errors}))
    rt.store.close()


if __name__ == "__main__":
    main(*sys.argv[1:4])
