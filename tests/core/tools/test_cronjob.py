"""The cronjob tool, called by the scripted model inside real turns and directly."""

from __future__ import annotations

import asyncio
import json

from core.contracts.dispatch import ChatRef
from core.contracts.toolkit import ToolContext, Toolset
from core.messages import InboundMessage, ToolCall
from core.scheduler.jobs import CronJobs
from core.tools.cronjob import Cronjob
from functions.worker import drain
from iris_testing.scripted_model import call, tool_calls


def cronjob(**arguments):
    return ToolCall(id="call_cron", name="cronjob", arguments=json.dumps(arguments))


def telegram_turn(runtime, text, n=1):
    """Run one turn for Telegram user 4242 in their private chat; returns the inbox entry."""
    store = runtime.store
    user_id = store.users.for_account("telegram:4242")
    entry_id = store.inbox.add(user_id, InboundMessage(
        platform="telegram", chat_id="4242", account="telegram:4242",
        platform_message_id=f"4242:{n}", text=text, meta={"message_id": n, "quote": False}))
    asyncio.run(drain(runtime, ChatRef(user_id, "telegram:4242")))
    return store.inbox.get(user_id, entry_id)


def tool_results(runtime, entry):
    stored = runtime.store.messages.for_session(entry.user_id, entry.session_id)
    return [m.message.content for m in stored if m.message.role == "tool"]


def context(runtime, account="http:alice", platform="http"):
    user_id = runtime.store.users.for_account(account)
    return ToolContext(store=runtime.store, settings=runtime.settings, user_id=user_id,
                       session_id="ses_x", chat_key=f"{platform}:x", platform=platform,
                       account=account, services=runtime.services)


def use(runtime, ctx, **arguments):
    message = asyncio.run(Toolset([Cronjob()]).call(
        ctx, ToolCall(id="c1", name="cronjob", arguments=json.dumps(arguments))))
    return message.content


def test_a_job_created_in_a_chat_delivers_to_that_chat(runtime, scripted):
    scripted.then(
        tool_calls(cronjob(action="create", prompt="Say hi to Ada.", schedule="every minute",
                           name="hello")),
        "Done: I will say hi every minute.",
    )
    entry = telegram_turn(runtime, "every minute say hi")
    assert entry.reply == "Done: I will say hi every minute."
    (result,) = tool_results(runtime, entry)
    (job,) = CronJobs(runtime.store).list(entry.user_id)
    assert result.startswith("Created:") and job.id in result and "next run" in result
    assert (job.name, job.prompt, job.schedule.expr) == ("hello", "Say hi to Ada.", "every 1m")
    assert job.target.chat_key == "telegram:4242" and job.created_by == "telegram:4242"
    assert "cronjob" not in scripted.tools_seen[0]  # in the catalogue,
    assert "cronjob" in scripted.tools_seen[-1]  # loaded by calling it


def test_plain_language_schedules_ask_the_side_model(runtime, scripted):
    scripted.then(
        tool_calls(call("cronjob", action="create", prompt="Post the standup reminder.",
                        schedule="each workday morning at nine sharp")),
        "0 9 * * 1-5",  # the side model's rewrite
        "Scheduled.",
    )
    entry = telegram_turn(runtime, "remind me of standup each workday morning at nine sharp")
    (job,) = CronJobs(runtime.store).list(entry.user_id)
    assert job.schedule.expr == "0 9 * * 1-5"
    assert "5-field cron" in scripted.requests[1][0].content


def test_every_action(runtime, scripted):
    ctx = context(runtime)
    created = use(runtime, ctx, action="create", prompt="Check the build", schedule="every 2h",
                  name="build", deliver="none")
    job = CronJobs(runtime.store).get(ctx.user_id, "build")
    assert created.startswith("Created:") and "every 2 hours" in created
    assert use(runtime, ctx, action="list").startswith(f"{job.id} “build”: every 2 hours")
    updated = use(runtime, ctx, action="update", job_id="build", schedule="daily at 07:30",
                  repeat=3)
    assert "at 07:30 every day" in updated and "runs: 0 of 3" in updated
    assert "paused" in use(runtime, ctx, action="pause", job_id=job.id)
    assert CronJobs(runtime.store).get(ctx.user_id, job.id).state == "paused"
    assert "next" in use(runtime, ctx, action="resume", job_id=job.id)
    scripted.then("build is green")

    async def run_and_wait():
        # the tool dispatches the run's chat as a task of this loop: wait for it here, before
        # the loop closes (a closing loop would cancel it mid-turn)
        message = await Toolset([Cronjob()]).call(ctx, ToolCall(
            id="c1", name="cronjob", arguments=json.dumps({"action": "run", "job_id": job.id})))
        await runtime.dispatcher.idle()
        return message.content

    started = asyncio.run(run_and_wait())
    assert started.startswith("Started run_") and "nowhere" in started
    (run,) = CronJobs(runtime.store).runs(ctx.user_id, job.id)
    assert (run.trigger, run.status, run.reply) == ("manual", "ok", "build is green")
    assert "run history is kept" in use(runtime, ctx, action="remove", job_id=job.id)
    assert use(runtime, ctx, action="list") == "No scheduled jobs."


def test_mistakes_come_back_as_errors_the_model_can_fix(runtime, scripted):
    scripted.then("NONE")  # the side model cannot read "every so often" either
    ctx = context(runtime)
    assert "create needs 'prompt' and 'schedule'" in use(runtime, ctx, action="create",
                                                         prompt="x")
    bad = use(runtime, ctx, action="create", prompt="x", schedule="every so often")
    assert bad.startswith("Error: can't understand") and "daily at 09:00" in bad
    assert "needs 'job_id'" in use(runtime, ctx, action="pause")
    assert "no job 'job_nope'" in use(runtime, ctx, action="remove", job_id="job_nope")
    assert "invalid arguments" in use(runtime, ctx, action="explode")
    assert runtime.store.db.scalar("SELECT count(*) FROM cron_jobs") == 0


def test_a_scheduled_run_cannot_create_or_start_jobs(runtime):
    ctx = context(runtime, account="cron:job_1", platform="cron")
    assert "cannot create jobs" in use(runtime, ctx, action="create", prompt="x",
                                       schedule="every 5m")
    assert use(runtime, ctx, action="list") == "No scheduled jobs."
