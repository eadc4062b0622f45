"""The cron tick end to end in one process: claims → worker → turn → delivery through
python-telegram-bot to the fake Bot API on loopback. Concurrency across threads and processes."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pydantic import SecretStr

from core.clock import ManualClock
from core.contracts.dispatch import ChatRef
from core.errors import ProviderError
from core.messages import InboundMessage
from core.scheduler.jobs import CronJobs
from functions import cron
from functions.dispatch import LocalDispatcher
from functions.runtime import compose
from functions.sweeper import sweep
from functions.tick import run_tick
from functions.worker import MAX_ATTEMPTS
from iris_testing.scripted_model import FixedRouter
from iris_testing.server import serve
from iris_testing.telegram_api import FakeTelegram
from iris_testing.waiting import wait_until
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import MINUTE, make_job

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "7000001:test-token"


@pytest.fixture
def clock():
    """Every test here runs on a clock that stands at NOW until a tick moves it."""
    return ManualClock(NOW)


class RecordingDispatcher:
    def __init__(self) -> None:
        self.chats: list[ChatRef] = []

    async def drain(self, chat: ChatRef) -> None:
        self.chats.append(chat)


@pytest.fixture
def telegram():
    fake = FakeTelegram()
    with serve(fake.app) as server:
        yield fake, server.url


@pytest.fixture
def rt(settings, store, scripted, telegram):
    _, url = telegram
    configured = settings.model_copy(update={
        "telegram_token": SecretStr(TOKEN), "telegram_api_base": url,
    })
    dispatcher = LocalDispatcher()
    runtime = compose(configured, dispatcher=dispatcher, store=store, router=FixedRouter(scripted))
    return runtime


def ada(store) -> str:
    """A Telegram user who has talked to Iris in a private chat (id 4242)."""
    user_id = store.users.for_account("telegram:4242")
    store.inbox.add(user_id, InboundMessage(
        platform="telegram", chat_id="4242", account="telegram:4242", platform_message_id="4242:1",
        text="hello", meta={"message_id": 1, "quote": False}))
    store.db.execute("UPDATE inbox SET status = 'done' WHERE user_id = ?", (user_id,))
    return user_id


def tick_at(rt, at):
    """The minute tick at ``at``: the clock moves there and the tick reads it."""
    rt.store.clock.set(at)

    async def go():
        report = await cron.tick(rt)
        await rt.dispatcher.idle()
        return report

    return asyncio.run(go())


def full_tick(rt):
    """``run_tick`` (cron, curation, sweep) at the clock's time, and the turns it started."""
    async def go():
        report = await run_tick(rt)
        await rt.dispatcher.idle()
        return report

    return asyncio.run(go())


def sent(fake):
    return [m["text"] for m in fake.sent_messages()]


def test_a_due_job_runs_in_its_own_session_and_its_answer_reaches_the_chat(rt, scripted,
                                                                          telegram):
    fake, _ = telegram
    ada(rt.store)
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, account="telegram:4242",
                   prompt="say hi", deliver="telegram", name="greeter")
    scripted.then("hi there")
    report = tick_at(rt, NOW + 5 * MINUTE)
    assert [c.job_id for c in report.claimed] == [job.id]
    assert sent(fake) == ["⏰ greeter\n\nhi there"]

    (run,) = CronJobs(rt.store).runs(job.user_id, job.id)
    assert (run.status, run.delivery.status, run.delivery.attempts) == ("ok", "sent", 1)
    session = rt.store.sessions.get(job.user_id, run.session_id)
    assert session.chat_key == f"cron:{job.id}" and session.platform == "cron"
    stored = [m.message for m in rt.store.messages.for_session(job.user_id, session.id)]
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[0].content.endswith("say hi") and stored[1].content == "hi there"
    assert rt.store.sessions.latest(job.user_id, "telegram:4242") is None  # chat untouched
    assert "cron" in scripted.requests[0][0].content.lower()  # the scheduled-job prompt hint

    assert tick_at(rt, NOW + 6 * MINUTE).claimed == []
    scripted.then("hi again")
    tick_at(rt, NOW + 10 * MINUTE)
    assert sent(fake)[-1] == "⏰ greeter\n\nhi again"
    assert len(CronJobs(rt.store).runs(job.user_id, job.id)) == 2


def test_silent_answers_are_stored_but_not_sent(rt, scripted, telegram):
    fake, _ = telegram
    ada(rt.store)
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, account="telegram:4242",
                   deliver="telegram", prompt="tell me only if the build broke")
    scripted.then(" [SILENT]\n")
    tick_at(rt, NOW + 5 * MINUTE)
    (run,) = CronJobs(rt.store).runs(job.user_id, job.id)
    assert (run.status, run.delivery) == ("silent", None)
    assert rt.store.messages.count(job.user_id, run.session_id) == 2
    scripted.then("The build broke. [SILENT] is not the whole answer, so this is sent.")
    tick_at(rt, NOW + 10 * MINUTE)
    assert len(sent(fake)) == 1 and "The build broke" in sent(fake)[0]


def test_a_busy_chat_does_not_hold_up_a_jobs_delivery(rt, scripted, telegram):
    fake, _ = telegram
    user_id = ada(rt.store)
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, account="telegram:4242",
                   deliver="telegram", name="ping")
    busy = rt.store.leases.acquire(f"chat:{user_id}:telegram:4242", user_id, "wrk_other", 300)
    assert busy  # a long turn is running in Ada's chat
    scripted.then("pong")
    tick_at(rt, NOW + 5 * MINUTE)
    assert sent(fake) == ["⏰ ping\n\npong"]
    assert CronJobs(rt.store).runs(job.user_id, job.id)[0].delivery.status == "sent"


def test_a_delivery_failing_twice_then_succeeding_is_delivered_exactly_once(rt, scripted,
                                                                           telegram):
    fake, _ = telegram
    ada(rt.store)
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, account="telegram:4242",
                   deliver="telegram", name="report")
    fake.fail_next("sendMessage", times=2)
    scripted.then("the report")
    tick_at(rt, NOW + 5 * MINUTE)
    (run,) = CronJobs(rt.store).runs(job.user_id, job.id)
    assert run.status == "ok" and run.delivery.status == "pending"
    assert run.delivery.attempts == 1 and run.delivery.last_error
    for attempt in (2, 3):
        # the next tick after the backoff sweeps the delivery again (long before the job's
        # next slot at NOW + 10 minutes)
        retry_at = run.delivery.next_attempt_at
        assert rt.store.clock.now() < retry_at < (NOW + 10 * MINUTE).timestamp()
        rt.store.clock.set(retry_at)
        assert full_tick(rt).cron.claimed == []
        (run,) = CronJobs(rt.store).runs(job.user_id, job.id)
        assert run.delivery.attempts == attempt
    assert run.delivery.status == "sent"
    rt.store.clock.advance(3600)  # an hour on: the job runs again, the sent reply never does
    scripted.then("the next report")
    full_tick(rt)
    assert sent(fake) == ["⏰ report\n\nthe report", "⏰ report\n\nthe next report"]
    assert fake.methods_called().count("sendMessage") == 4


def test_a_failed_turn_is_recorded_and_the_owner_is_told(rt, scripted, telegram):
    fake, _ = telegram
    ada(rt.store)
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, account="telegram:4242",
                   deliver="telegram", name="digest")
    scripted.then(ProviderError("rate_limit", "429 slow down", retryable=True))
    tick_at(rt, NOW + 5 * MINUTE)
    (run,) = CronJobs(rt.store).runs(job.user_id, job.id)
    assert run.status == "failed" and "rate_limit: 429 slow down" in run.error
    assert run.delivery.status == "sent"
    (told,) = sent(fake)
    assert told.startswith("⚠️ Scheduled job “digest”") and "rate-limiting" in told
    assert CronJobs(rt.store).get(job.user_id, job.id).state == "active"  # later runs still happen


def test_a_history_only_jobs_failure_goes_to_the_owners_latest_chat(rt, scripted, telegram):
    fake, _ = telegram
    ada(rt.store)
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, account="telegram:4242",
                   deliver="none")
    scripted.then("fine")
    tick_at(rt, NOW + 5 * MINUTE)
    assert sent(fake) == [] and CronJobs(rt.store).runs(job.user_id, job.id)[0].status == "ok"
    scripted.then(ProviderError("auth", "bad key", retryable=False))
    tick_at(rt, NOW + 10 * MINUTE)
    (told,) = fake.sent_messages()
    assert str(told["chat_id"]) == "4242" and "failed" in told["text"]


def test_a_run_that_keeps_crashing_is_given_up_recorded_and_reported(rt, scripted, telegram):
    fake, _ = telegram
    ada(rt.store)
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, account="telegram:4242",
                   deliver="telegram", name="flaky")

    def crash(messages):
        raise RuntimeError("the worker died")

    scripted.then(*[crash] * MAX_ATTEMPTS)
    tick_at(rt, NOW + 5 * MINUTE)
    for _ in range(MAX_ATTEMPTS):
        (run,) = CronJobs(rt.store).runs(job.user_id, job.id)
        assert run.status == "running"
        rt.store.clock.advance(60)  # past the sweeper's grace period

        async def swept():
            await sweep(rt)
            await rt.dispatcher.idle()

        asyncio.run(swept())
    (run,) = CronJobs(rt.store).runs(job.user_id, job.id)
    assert run.status == "failed" and f"gave up after {MAX_ATTEMPTS} attempts" in run.error
    (told,) = sent(fake)
    assert "“flaky”" in told and "failed" in told


def test_a_jobs_model_override_reaches_the_router(rt, scripted):
    seen = []

    class Router(FixedRouter):
        def main(self, override=None):
            seen.append(override)
            return self.model

    rt.router = Router(scripted)
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, deliver="none",
                   model="openai/gpt-4o-mini", owner=True)
    scripted.then("ok")
    tick_at(rt, NOW + 5 * MINUTE)
    assert seen == ["openai/gpt-4o-mini"]
    assert CronJobs(rt.store).runs(job.user_id, job.id)[0].status == "ok"


def test_a_jobs_skills_are_loaded_into_its_runs(rt, scripted):
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, deliver="none",
                   skills=["cron-automations"])
    scripted.then("ok")
    tick_at(rt, NOW + 5 * MINUTE)
    asked = scripted.requests[0][-1].content
    assert '<skill name="cron-automations">' in asked and "# Cron automations" in asked
    assert job.skills == ["cron-automations"]


def test_a_failed_dispatch_loses_nothing_the_sweeper_starts_the_run(rt, scripted):
    class Down:
        async def drain(self, chat):
            raise ConnectionError("modal is unreachable")

    working = rt.dispatcher
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, deliver="none")
    rt.dispatcher = Down()
    report = asyncio.run(cron.tick(rt, now=NOW + 5 * MINUTE))
    assert len(report.claimed) == 1 and "modal is unreachable" in report.errors[0]
    (queued,) = CronJobs(rt.store).runs(job.user_id, job.id)
    assert queued.status == "queued" and "dispatch failed" in queued.error
    rt.dispatcher = working
    rt.store.clock.advance(60)  # past the sweeper's grace period
    scripted.then("late but done")

    async def swept():
        await sweep(rt)
        await rt.dispatcher.idle()

    asyncio.run(swept())
    (run,) = CronJobs(rt.store).runs(job.user_id, job.id)
    assert (run.status, run.reply, run.error) == ("ok", "late but done", None)


def test_run_tick_runs_the_cron_tick_and_then_sweeps(rt, scripted):
    job = make_job(rt.store, rt.settings, schedule="every 5m", at=NOW, deliver="none")
    rt.store.clock.advance(5 * MINUTE)
    scripted.then("ran")
    report = full_tick(rt)
    assert report.cron_ran and [c.job_id for c in report.cron.claimed] == [job.id]
    assert report.sweep is not None
    assert CronJobs(rt.store).runs(job.user_id, job.id)[0].reply == "ran"


def many_jobs(store, settings, count):
    jobs = []
    for n in range(count):
        account = f"http:user{n % 4}"
        jobs.append(make_job(store, settings, schedule="every 5m", at=NOW, account=account,
                             name=f"job {n}", deliver="none"))
    return jobs


def test_two_ticks_at_the_same_moment_run_each_job_once(rt, scripted):
    jobs = many_jobs(rt.store, rt.settings, 12)
    at = NOW + 5 * MINUTE
    barrier = threading.Barrier(2)
    reports = [None, None]
    recorders = [RecordingDispatcher(), RecordingDispatcher()]

    def run(i):
        mine = dataclasses.replace(rt, dispatcher=recorders[i])
        barrier.wait()
        reports[i] = asyncio.run(cron.tick(mine, now=at))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    claimed = [c.job_id for r in reports for c in r.claimed]
    assert sorted(claimed) == sorted(j.id for j in jobs)
    assert all(not r.errors for r in reports)
    assert len(recorders[0].chats) + len(recorders[1].chats) == len(jobs)

    scripted.then(*[f"answer {n}" for n in range(len(jobs))])

    async def drain_all():
        for chat in recorders[0].chats + recorders[1].chats:
            await rt.dispatcher.drain(chat)
        await rt.dispatcher.idle()

    asyncio.run(drain_all())
    assert len(scripted.requests) == len(jobs)
    for job in jobs:
        (run,) = CronJobs(rt.store).runs(job.user_id, job.id)
        assert run.status == "ok"


def test_two_tick_processes_at_the_same_moment_run_each_job_once(rt, tmp_path):
    jobs = many_jobs(rt.store, rt.settings, 30)
    at = (NOW + 5 * MINUTE).isoformat()
    env = {**os.environ, "IRIS_HOME": str(rt.settings.home)}
    go = tmp_path / "go"
    children = []
    for i in range(2):
        ready = tmp_path / f"ready{i}"
        children.append((ready, subprocess.Popen(
            [sys.executable, "-m", "tests.functions.cron_tick_proc", at, str(ready), str(go)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    def started() -> bool:
        assert all(p.poll() is None for _, p in children), children[0][1].stderr.read()
        return all(ready.exists() for ready, _ in children)

    wait_until(started, "both tick processes to be ready")
    go.touch()
    outputs = []
    for _, process in children:
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    first, second = (set(o["claimed"]) for o in outputs)
    assert not first & second
    assert len(first | second) == len(jobs)
    assert all(not o["errors"] for o in outputs)
    db = rt.store.db
    assert db.scalar("SELECT count(*) FROM cron_runs") == len(jobs)
    assert db.scalar("SELECT count(DISTINCT job_id) FROM cron_runs") == len(jobs)
    assert db.scalar("SELECT count(*) FROM inbox WHERE platform = 'cron'") == len(jobs)
    for job in jobs:
        assert CronJobs(rt.store).get(job.user_id, job.id).next_run_at == (
            NOW + 10 * MINUTE).timestamp()
