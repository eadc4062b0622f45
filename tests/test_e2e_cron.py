"""Scheduled jobs end to end in the emulator: a Telegram user asks for a job in chat (the scripted
model calls ``cronjob``), ``iris cron tick`` in another process runs it, the answer arrives in
that Telegram chat, the emulator's own ticker runs the next one, ``/cron`` lists the job, and
pausing stops it. Everything over real HTTP: FakeTelegram ⇄ uvicorn ⇄ litellm ⇄ ScriptedLLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from core.scheduler.jobs import CronJobs
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from iris_testing.telegram_api import FakeTelegram
from iris_testing.waiting import wait_until
from tests.fakes.stack import emulator_stack

ROOT = Path(__file__).resolve().parents[1]
SECRET = "telegram-webhook-secret"


def wait(predicate, what="the cron stack"):
    wait_until(predicate, what)


@pytest.fixture
def stack(request, monkeypatch, iris_home):
    tick_seconds = getattr(request, "param", 3600.0)  # default: one tick at start-up only
    llm, telegram = ScriptedLLM(), FakeTelegram()
    with serve(telegram.app) as bot, emulator_stack(
        llm, monkeypatch, tick_seconds=tick_seconds, IRIS_TELEGRAM_TOKEN="7000001:test-token",
        IRIS_TELEGRAM_SECRET=SECRET, IRIS_TELEGRAM_API_BASE=bot.url, IRIS_TELEGRAM_ACCESS="open",
    ) as iris:
        env = iris.env
        with httpx.Client(timeout=30) as http:
            def say(text):
                update = telegram.make_update(text)
                response = http.post(f"{iris.url}/telegram/webhook", json=update,
                                     headers={"X-Telegram-Bot-Api-Secret-Token": SECRET})
                assert response.status_code == 200, response.text

            def cli(*args):
                child = subprocess.run(
                    [sys.executable, "-m", "local_dev.cli", *args], cwd=ROOT,
                    env={**os.environ, **env, "IRIS_HOME": str(iris_home)},
                    capture_output=True, text=True, timeout=120)
                assert child.returncode == 0, child.stderr
                return child.stdout

            yield llm, telegram, iris.runtime, say, cli, iris.emulator


def texts(telegram):
    return [m["text"] for m in telegram.sent_messages(4242)]


def test_a_job_made_in_chat_runs_on_the_tick_answers_there_and_pauses(stack):
    llm, telegram, rt, say, cli, _ = stack
    llm.tool_call("cronjob", {"action": "create", "prompt": "Say hi to Ada.",
                              "schedule": "every minute", "name": "hi"})
    llm.reply("Done: I will say hi every minute.")
    say("every minute say hi")
    wait(lambda: texts(telegram))
    assert texts(telegram) == ["Done: I will say hi every minute."]
    user = rt.store.users.resolve("telegram:4242")
    (job,) = CronJobs(rt.store).list(user)
    assert job.target.label == "telegram:4242"

    llm.reply("hi Ada!")
    at = (datetime.now(UTC) + timedelta(minutes=2)).isoformat()
    report = json.loads(cli("cron", "tick", "--at", at, "--json"))
    (run,) = report["cron"]["runs"]
    assert (run["job_id"], run["status"], run["delivery_state"]) == (job.id, "ok", "sent")
    assert texts(telegram)[-1] == "⏰ hi\n\nhi Ada!"

    say("/cron")
    wait(lambda: texts(telegram)[-1].startswith(job.id))
    assert f"{job.id} “hi”: every minute" in texts(telegram)[-1]
    assert "last run ok" in texts(telegram)[-1]

    say(f"/cron pause {job.id}")
    wait(lambda: texts(telegram)[-1].startswith("Paused"))
    requests, sent = len(llm.requests), len(texts(telegram))
    rt.store.db.execute("UPDATE cron_jobs SET next_run_at = ? WHERE id = ?",
                        (time.time() - 1, job.id))
    later = (datetime.now(UTC) + timedelta(hours=3)).isoformat()
    paused = json.loads(cli("cron", "tick", "--at", later, "--json"))
    assert paused["cron"]["due"] == 0 and paused["cron"]["runs"] == []
    assert len(llm.requests) == requests and len(texts(telegram)) == sent
    (shown,) = json.loads(cli("cron", "runs", job.id, "--json"))
    assert (shown["status"], shown["delivery"]["status"]) == ("ok", "sent")


@pytest.mark.parametrize("stack", [0.2], indirect=True)
def test_the_emulators_ticker_runs_due_jobs(stack):
    llm, telegram, rt, _, cli, emulator = stack
    llm.reply("hi from the ticker")
    user = rt.store.users.for_account("telegram:4242")
    cli("cron", "add", "--user", "telegram:4242", "--schedule", "every 5m", "--prompt",
        "Say hi.", "--name", "hi", "--deliver", "telegram:4242")
    (job,) = CronJobs(rt.store).list(user)
    rt.store.db.execute("UPDATE cron_jobs SET next_run_at = ? WHERE id = ?",
                        (time.time() - 1, job.id))  # as if five minutes had gone by
    wait(lambda: texts(telegram) == ["⏰ hi\n\nhi from the ticker"])
    # the fake has the message before the sender has recorded Telegram's answer
    wait(lambda: CronJobs(rt.store).runs(user, job.id)[0].delivery.status == "sent")
    (run,) = CronJobs(rt.store).runs(user, job.id)
    assert (run.trigger, run.status, run.delivery.status) == ("schedule", "ok", "sent")
    # Three more ticks: the next run is minutes away, nothing runs twice.
    ticked = emulator.ticks
    wait(lambda: emulator.ticks >= ticked + 3, "three more ticks of the emulator's ticker")
    assert len(CronJobs(rt.store).runs(user, job.id)) == 1 and len(llm.requests) == 1
