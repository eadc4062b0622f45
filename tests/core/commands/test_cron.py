"""/cron in a chat: list, add, show, runs, pause, resume, run, remove; no model call for any."""

from __future__ import annotations

import asyncio

from core.contracts.dispatch import ChatRef
from core.messages import InboundMessage
from core.scheduler.jobs import CronJobs
from functions.worker import drain


class Chat:
    def __init__(self, runtime):
        self.rt = runtime
        self.user_id = runtime.store.users.for_account("telegram:4242")
        self.n = 0

    def say(self, text: str) -> str:
        self.n += 1
        entry_id = self.rt.store.inbox.add(self.user_id, InboundMessage(
            platform="telegram", chat_id="4242", account="telegram:4242",
            platform_message_id=f"4242:{self.n}", text=text,
            meta={"message_id": self.n, "quote": False}))

        async def go():
            await drain(self.rt, ChatRef(self.user_id, "telegram:4242"))
            await self.rt.dispatcher.idle()

        asyncio.run(go())
        return self.rt.store.inbox.get(self.user_id, entry_id).reply


def test_cron_in_a_chat(runtime, scripted):
    chat = Chat(runtime)
    assert chat.say("/cron").startswith("No scheduled jobs")
    added = chat.say("/cron add weekdays at 9 | Summarise my open issues")
    (job,) = CronJobs(runtime.store).list(chat.user_id)
    assert added.startswith("Scheduled:") and job.id in added
    assert job.target.chat_key == "telegram:4242" and job.schedule.expr == "0 9 * * 1-5"
    listed = chat.say("/cron")
    assert listed.startswith(f"{job.id} “Summarise my open issues”: at 09:00 on Monday–Friday")
    assert "→ telegram:4242" in listed
    assert "delivers to: telegram:4242" in chat.say(f"/cron show {job.id}")
    assert chat.say(f"/cron runs {job.id}") == f"{job.id} has not run yet."
    assert "paused" in chat.say(f"/cron pause {job.id}")
    assert CronJobs(runtime.store).get(chat.user_id, job.id).state == "paused"
    assert "next" in chat.say(f"/cron resume {job.id}")

    scripted.then("3 open issues")
    started = chat.say(f"/cron run {job.id}")
    assert started.startswith(f"Running {job.id}") and "telegram:4242" in started
    runs = chat.say(f"/cron runs {job.id}")
    assert "(manual): ok" in runs and "answer: 3 open issues" in runs
    assert "last run ok" in chat.say("/cron")
    assert "history is kept" in chat.say(f"/cron remove {job.id}")
    assert chat.say("/cron").startswith("No scheduled jobs")
    assert len(scripted.requests) == 1  # only the run itself used the model


def test_cron_mistakes_are_explained(runtime):
    chat = Chat(runtime)
    assert chat.say("/cron pause").startswith("Usage: /cron")
    assert chat.say("/cron add every day").startswith("Usage: /cron")
    assert "no job 'job_nope'" in chat.say("/cron pause job_nope")
    assert "too frequent" in chat.say("/cron add every 5 seconds | ping")
    assert runtime.store.db.scalar("SELECT count(*) FROM cron_jobs") == 0
