"""What a turn costs in database round trips: a local file next to the Hrana test server.

Iris on uvicorn (the real Telegram webhook route) with the fake Telegram API behind its real
sender, an in-process scripted model that answers at once, and the database either on a local
file or behind the Hrana test server (tests/fakes/hrana_server.py, a child process on loopback:
libSQL's remote protocol, as Iris talks to Turso) with a fixed delay added to every round trip.
The dispatcher only records, so each step is measured alone:

- webhook ack: the Telegram POST until its 200 (access check, inbox insert, dispatch);
- first turn: a new user's first message, drained by the worker (lease, session, system prompt,
  model, commit, delivery sent), after-turn hooks counted apart;
- warm turn: the same chat's next message; tool turn: one ``clock`` tool call, then the answer;
- cron run: the minute's tick with one job due (claim, curation check, sweep) and the job's turn.

Prints round trips (HTTP requests to the server), statements (run by the server; a describe
counts as none) and wall time, per step and delay. Samples of warm and tool turns: the median.

Run: .venv/bin/python bench/remote_turn.py [--delays 0,10,40] [--samples 5] [--log FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (puts the project on sys.path)
import httpx
from webhook_reliability import HRANA_TOKEN, hrana

TELEGRAM_SECRET = "bench-secret"


@dataclass
class Recorder:
    """A dispatcher that only notes which chats were dispatched (as the Modal web container
    spawns a worker and answers)."""

    chats: list[Any] = field(default_factory=list)

    def bind(self, runtime: Any) -> None:
        pass

    async def drain(self, chat: Any) -> None:
        self.chats.append(chat)


@dataclass
class Cost:
    round_trips: int
    statements: int
    issued: int  # statements Iris asked the database to run (both backends)
    seconds: float
    waited: float = 0.0  # seconds Iris waited for the database's answers (Hrana)


class Meter:
    """Round trips and statements on the Hrana server (None: a file database), and the
    statements Iris issued, around one step."""

    def __init__(self, db: Any, server: str | None):
        self.server = server
        self.db = db
        self.issued = 0
        run = db._run

        def counting(sql: str, params: Any) -> Any:
            self.issued += 1
            return run(sql, params)

        db._run = counting

    def _stats(self) -> dict[str, int]:
        if self.server is None:
            return {}
        return httpx.get(f"{self.server}/_fake/stats").json()

    async def measure(self, step: Callable[[], Awaitable[Any]]) -> tuple[Cost, Any]:
        before, issued = self._stats(), self.issued
        waited = self.db.remote_counters().get("waited_ms", 0)
        started = time.perf_counter()
        result = await step()
        seconds = time.perf_counter() - started
        waited = self.db.remote_counters().get("waited_ms", 0) - waited
        after = self._stats()
        cost = Cost(
            round_trips=after.get("round_trips", 0) - before.get("round_trips", 0),
            statements=after.get("statements", 0) - before.get("statements", 0),
            issued=self.issued - issued, seconds=seconds, waited=waited / 1000,
        )
        return cost, result


def median(costs: list[Cost]) -> Cost:
    return Cost(
        round_trips=round(statistics.median(c.round_trips for c in costs)),
        statements=round(statistics.median(c.statements for c in costs)),
        issued=round(statistics.median(c.issued for c in costs)),
        seconds=statistics.median(c.seconds for c in costs),
        waited=statistics.median(c.waited for c in costs),
    )


async def scenario(home: Path, samples: int, server: str | None,
                   env: dict[str, str]) -> dict[str, Cost]:
    from pydantic import SecretStr

    from core.config import load_settings
    from core.scheduler.manage import Actor, create_job
    from functions.app import create_app
    from functions.cron import tick
    from functions.runtime import compose
    from functions.tick import run_tick
    from functions.worker import _drain, lease_name, run_after_turn
    from iris_testing.scripted_model import FixedRouter, ScriptedModel, call, tool_calls
    from iris_testing.server import start_server
    from iris_testing.telegram_api import FakeTelegram

    telegram = FakeTelegram()
    servers = [start_server(telegram.app)]
    variables = {
        "IRIS_HOME": str(home), "IRIS_TELEGRAM_TOKEN": "7000001:bench-token",
        "IRIS_TELEGRAM_SECRET": TELEGRAM_SECRET, "IRIS_TELEGRAM_API_BASE": servers[0].url,
        "IRIS_TELEGRAM_ACCESS": "open", **env,
    }
    # Titles and reviews are side-model calls (model time) run after the reply: off here.
    settings = load_settings(variables).model_copy(update={
        "api_key": SecretStr("k"), "session_titles": False, "memory_review_every": 0,
        "memory_review_at_session_end": False, "skill_review_min_tool_calls": 0,
    })
    model = ScriptedModel()
    recorder = Recorder()
    rt = compose(settings, dispatcher=recorder, router=FixedRouter(model))
    meter = Meter(rt.store.db, server)
    servers.append(start_server(create_app(rt)))
    results: dict[str, list[Cost]] = {}
    http = httpx.AsyncClient(timeout=120)

    def note(name: str, cost: Cost) -> None:
        results.setdefault(name, []).append(cost)

    async def ack(text: str) -> Any:
        update = telegram.make_update(text)
        response = await http.post(
            f"{servers[1].url}/telegram/webhook", json=update,
            headers={"X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET})
        response.raise_for_status()
        return recorder.chats.pop()

    async def turn(chat: Any, *, prefix: str) -> None:
        finished: list[Any] = []
        cost, _ = await meter.measure(
            lambda: _drain(rt, chat, lease_name(chat), f"wrk_bench_{prefix}", finished))
        note(prefix, cost)
        cost, _ = await meter.measure(lambda: run_after_turn(rt, finished))
        note(f"{prefix}, after-turn hooks", cost)

    try:
        model.then("hello")
        cost, chat = await meter.measure(lambda: ack("hi, I am new here"))
        note("webhook ack, new user", cost)
        await turn(chat, prefix="first turn")
        for i in range(samples):
            model.then("fine")
            cost, chat = await meter.measure(partial(ack, f"how are you? {i}"))
            note("webhook ack", cost)
            await turn(chat, prefix="warm turn")
        for i in range(samples):
            model.then(tool_calls(call("clock", timezone="UTC")), "it is noon")
            _, chat = await meter.measure(partial(ack, f"what time is it? {i}"))
            await turn(chat, prefix="tool turn")
        user_id = chat.user_id
        actor = Actor(user_id=user_id, account="telegram:4242")
        await create_job(rt.store, settings, actor, prompt="say hi", schedule="every 5m",
                         name="bench job", deliver="none")
        due = rt.store.clock.utcnow() + timedelta(minutes=6)
        for i in range(samples):
            model.then("hi")
            at = due + timedelta(minutes=5 * i)
            cost, _ = await meter.measure(partial(run_tick, rt, cron=partial(tick, now=at)))
            note("cron tick (1 job due)", cost)
            job_chat = recorder.chats.pop()
            await turn(job_chat, prefix="cron run")
        assert (
            len(telegram.sent_messages()) == 1 + 2 * samples
        ), f"replies sent: {len(telegram.sent_messages())}"
    finally:
        await http.aclose()
        for running in servers:
            running.stop()
        rt.close()
    return {name: median(costs) for name, costs in results.items()}


ORDER = ("webhook ack, new user", "first turn", "first turn, after-turn hooks", "webhook ack",
         "warm turn", "warm turn, after-turn hooks", "tool turn", "tool turn, after-turn hooks",
         "cron tick (1 job due)", "cron run", "cron run, after-turn hooks")


def table(columns: dict[str, dict[str, Cost]]) -> str:
    heads = list(columns)
    lines = ["| step | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for name in ORDER:
        cells = []
        for head in heads:
            cost = columns[head].get(name)
            if cost is None:
                cells.append("-")
            elif head == "file":
                cells.append(f"{cost.issued} st, {cost.seconds * 1000:.0f} ms")
            else:
                db_time = f" (db {cost.waited * 1000:.0f})" if cost.waited else ""
                cells.append(f"{cost.round_trips} rt, {cost.statements} st, "
                             f"{cost.seconds * 1000:.0f} ms{db_time}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delays", default="0,10,40", help="ms added to each round trip")
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--log", default=None, help="the Hrana server logs every request here")
    args = parser.parse_args()
    # the fake Telegram API logs each typing indicator the sender cancels: not a failure
    logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
    columns: dict[str, dict[str, Cost]] = {}
    columns["file"] = asyncio.run(
        scenario(Path(tempfile.mkdtemp(prefix="iris-bench-")), args.samples, None, {}))
    print(table(columns), flush=True)
    with hrana(Path(tempfile.mkdtemp(prefix="iris-hrana-")), log=args.log) as url:
        for delay in (int(d) for d in args.delays.split(",")):
            httpx.post(f"{url}/_fake/faults",
                       json={"rules": [], "delay": delay / 1000}).raise_for_status()
            columns[f"Hrana {delay} ms"] = asyncio.run(scenario(
                Path(tempfile.mkdtemp(prefix="iris-bench-")), args.samples, url,
                {"IRIS_DB_URL": f"{url}/db/d{delay}", "IRIS_DB_AUTH_TOKEN": HRANA_TOKEN}))
            print(table(columns), flush=True)
    print("\nrt: HTTP round trips to the database; st: statements it ran (file: statements "
          "Iris issued); ms: wall time, scripted model (db: of which waiting for the "
          f"database's answers). Warm, tool and cron rows: median of {args.samples}.")


if __name__ == "__main__":
    main()
