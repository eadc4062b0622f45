"""`iris dev` (a real subprocess) killed with SIGKILL while 50 Telegram chats are mid-turn and
cron runs are due, then started again (issue 18, item 5). ``kill_and_restart`` counts, at the
fake Telegram API and the scripted model server, what every inbound message and due run got;
tests/test_e2e_kill_dev.py asserts it, bench/cloud_faults.py prints it. Every wait is on a
condition."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from core.config import load_settings
from core.scheduler.manage import Actor, create_job
from core.scheduler.targets import NO_TARGET
from core.store import open_store
from iris_testing.llm_server import Hang, ScriptedLLM
from iris_testing.server import free_port, serve
from iris_testing.telegram_api import FakeTelegram
from iris_testing.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "7000001:kill-token"
SECRET = "kill-secret"
MARK = re.compile(r"\b(m:\d+:\d|cron:\d+)\b")
REPLY = re.compile(r"\bre: (m:\d+:\d|cron:\d+)\b")


class Model:
    """Answers ``re: <mark>`` at once, except the marks in ``held`` until ``released``: those
    requests hang until the client goes away (the SIGKILL)."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Hang | str:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        text = users[-1]["content"] if users else ""
        text = text if isinstance(text, str) else json.dumps(text)
        found = MARK.findall(text)
        if not found or not body.get("tools"):
            return "ok"  # side work (titles, reviews) has no tools
        mark = found[-1]
        with self.lock:
            self.seen[mark] += 1
        if not self.released.is_set() and (mark.endswith(":1") or mark.startswith("cron:")):
            return Hang(300)
        return f"re: {mark}"


def wait_for(what: str, condition: Callable[[], object], timeout: float = 120) -> None:
    wait_until(condition, what, timeout=timeout)


def start_dev(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[str]:
    """``iris dev`` as its own process, its output in ``log`` (read it when this fails)."""
    with log.open("w") as out:
        dev = subprocess.Popen(
            [sys.executable, "-m", "local_dev.cli", "dev", "--port", str(port), "--tick", "0.5"],
            env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True)

    def healthy() -> bool:
        assert dev.poll() is None, "iris dev exited"
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for("iris dev to start", healthy, timeout=90)
    return dev


def post(http: httpx.Client, url: str, telegram: FakeTelegram, chat: int, seq: int) -> None:
    update = telegram.make_update(f"m:{chat}:{seq} hello", user_id=100_000 + chat)
    response = http.post(f"{url}/telegram/webhook", json=update,
                         headers={"X-Telegram-Bot-Api-Secret-Token": SECRET})
    assert response.status_code == 200, response.text


def make_due_jobs(settings_env: dict[str, str], jobs: int) -> None:
    """Cron jobs for the first users, delivering to their chats, all due before the restart."""
    settings = load_settings(settings_env)
    store = open_store(settings)
    try:
        for job in range(jobs):
            user_id = store.users.resolve(f"telegram:{100_000 + job}")
            actor = Actor(user_id=user_id, account="cli:test", origin=NO_TARGET,
                          privileged=True)
            created = asyncio.run(create_job(
                store, settings, actor, prompt=f"cron:{job} say the time", schedule="every 1h",
                deliver=f"telegram:{100_000 + job}"))
            store.db.execute("UPDATE cron_jobs SET next_run_at = ? WHERE id = ?",
                             (store.clock.now() - 5, created.id))
    finally:
        store.close()


def replies(telegram: FakeTelegram) -> Counter[str]:
    texts = [str(m.get("text", "")) for m in telegram.sent_messages()]
    return Counter(mark for text in texts for mark in REPLY.findall(text))


@dataclass
class KillReport:
    expected: list[str]  # every inbound message and due run, by mark
    mid_turn: list[str]  # those whose turn the kill interrupted
    answered_before_kill: Counter[str]
    replies: Counter[str]  # replies the fake Telegram received, by mark
    model_calls: Counter[str]  # the turns' model calls, by mark
    runs: list[dict[str, Any]]  # cron runs and their inbox status
    inbox: list[dict[str, Any]]  # every entry: its mark, status and attempts
    recovery_seconds: float  # from the restart to the last answer

    @property
    def answered_once(self) -> int:
        return sum(1 for m in self.expected if self.replies[m] == 1)

    @property
    def doubled(self) -> int:
        return sum(1 for m in self.expected if self.replies[m] > 1)

    @property
    def lost(self) -> int:
        return sum(1 for m in self.expected if self.replies[m] == 0)


def kill_and_restart(home: Path, logs: Path, *, chats: int = 50, jobs: int = 5,
                     lease_seconds: int = 30) -> KillReport:
    """Each chat sends a message (answered) and a second one (its turn held at the model);
    ``jobs`` cron jobs come due and their runs are held too; SIGKILL; restart; wait for every
    answer. ``lease_seconds``: a killed worker's lease holds its chat until it expires."""
    model, telegram = Model(), FakeTelegram(token=TOKEN)
    llm = ScriptedLLM()
    llm.handler = model
    mid_turn = [f"m:{c}:1" for c in range(chats)] + [f"cron:{j}" for j in range(jobs)]
    expected = [f"m:{c}:{s}" for c in range(chats) for s in (0, 1)] + [
        f"cron:{j}" for j in range(jobs)] + [f"m:{chats}:0"]  # and the warm-up
    with serve(llm.app) as model_server, serve(telegram.app) as api:
        env = {**os.environ, "IRIS_HOME": str(home), "PYTHONPATH": str(ROOT),
               "IRIS_MODEL": "openai/scripted-model", "IRIS_MODEL_API_BASE":
               f"{model_server.url}/v1", "IRIS_MODEL_API_KEY": "x",
               "IRIS_TELEGRAM_TOKEN": TOKEN, "IRIS_TELEGRAM_SECRET": SECRET,
               "IRIS_TELEGRAM_API_BASE": api.url, "IRIS_TELEGRAM_ACCESS": "open",
               "IRIS_LEASE_SECONDS": str(lease_seconds), "IRIS_SANDBOX_ISOLATION": "none"}
        first, second = free_port(), free_port()
        dev = start_dev(env, first, logs / "dev-1.log")
        url = f"http://127.0.0.1:{first}"
        try:
            with httpx.Client(timeout=30) as http:
                post(http, url, telegram, chats, 0)  # warm up: the first turn loads the models
                wait_for("the warm-up reply", lambda: replies(telegram)[f"m:{chats}:0"])
                for chat in range(chats):  # answered before the kill
                    post(http, url, telegram, chat, 0)
                wait_for("the first replies", lambda: len(replies(telegram)) > chats)
                make_due_jobs(env, jobs)  # the ticker (every 0.5 s) claims them
                for chat in range(chats):  # these and the cron runs are mid-turn at the kill
                    post(http, url, telegram, chat, 1)
                wait_for("every turn to reach the model",
                         lambda: all(model.seen[m] for m in mid_turn))
                before_kill = replies(telegram)
                dev.send_signal(signal.SIGKILL)
                dev.wait(30)
        finally:
            if dev.poll() is None:
                dev.kill()
                dev.wait(30)
        model.released.set()
        restarted = time.monotonic()
        dev = start_dev(env, second, logs / "dev-2.log")
        try:
            wait_for("every message and run answered after the restart",
                     lambda: all(replies(telegram)[m] for m in expected), timeout=300)
            recovery = time.monotonic() - restarted
            store = open_store(load_settings(env))
            try:
                wait_for("the inbox and deliveries to settle", lambda: settled(store))
                runs = store.db.query(
                    "SELECT r.job_id, i.status FROM cron_runs r"
                    " JOIN inbox i ON i.id = r.inbox_id AND i.user_id = r.user_id")
                inbox = [{"mark": _mark(row["payload"]), "status": row["status"],
                          "attempts": row["attempts"]}
                         for row in store.db.query("SELECT status, attempts, payload FROM inbox")]
            finally:
                store.close()
        finally:
            dev.terminate()
            dev.wait(30)
    return KillReport(expected, mid_turn, before_kill, replies(telegram), model.seen.copy(),
                      runs, inbox, recovery)


def _mark(payload: str) -> str | None:
    found = MARK.findall(payload)
    return found[0] if found else None


def settled(store: Any) -> bool:
    db = store.db
    return (db.scalar("SELECT count(*) FROM inbox WHERE status = 'pending'") == 0
            and db.scalar("SELECT count(*) FROM deliveries WHERE status = 'pending'") == 0)
