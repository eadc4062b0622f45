"""Nothing lost, nothing doubled, nothing out of order: many webhook deliveries from both
platforms with repeats (tests/functions/webhook_load.py; bench/webhook_reliability.py runs
1,000), and a worker killed at every step of a turn."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from functions.dispatch import LocalDispatcher
from functions.sweeper import sweep
from tests.functions import crash_platform_worker
from tests.functions.platform_stack import platform_stack
from tests.functions.webhook_load import run

ROOT = Path(__file__).resolve().parents[2]
STEPS = ["after_lease", "after_model", "after_tools", "before_commit", "before_delivery",
         "after_delivery"]


def test_100_deliveries_over_10_chats_with_repeats(iris_home):
    with platform_stack(iris_home) as stack:
        report = run(stack, messages=100, chats=10, repeat_share=0.2, timeout=60)
    print(report.line())
    assert report.deliveries > 110  # the repeats were sent
    assert (report.lost, report.doubled, report.out_of_order) == (0, 0, 0)
    assert report.statuses == {200: report.deliveries}


class HandOff:
    """Records the message and leaves the chat for another container's worker."""

    async def drain(self, chat):
        return None


def post(stack, platform):
    if platform == "telegram":
        return stack.telegram_post(stack.telegram.make_update("crash me"))
    event = stack.slack.message_event("crash me", channel="D7", channel_type="im")
    return stack.slack_post(stack.slack.event_payload(event))


def replies(stack, platform):
    if platform == "telegram":
        return [m["text"] for m in stack.telegram.sent_messages()]
    return [p["text"] for p in stack.slack.posted()]


# Every step, the platforms taking turns (bench/webhook_reliability.py --crash runs all 12).
@pytest.mark.parametrize(("step", "platform"), [
    (step, ("telegram", "slack")[i % 2]) for i, step in enumerate(STEPS)
])
def test_a_worker_killed_at_any_step_completes_once_and_replies_once(iris_home, step, platform):
    with platform_stack(iris_home) as stack:
        rt = stack.rt
        rt.dispatcher = HandOff()
        assert post(stack, platform).status_code == 200
        entry = rt.store.db.one("SELECT id, user_id, chat_key FROM inbox")
        env = {**os.environ, **stack.env, "PYTHONPATH": str(ROOT)}
        child = subprocess.run(
            [sys.executable, "-m", "tests.functions.crash_platform_worker", entry["user_id"],
             entry["chat_key"], step],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
        )
        assert child.returncode == crash_platform_worker.EXIT_CODE, child.stderr

        rt.store.db.execute("UPDATE leases SET expires_at = 0")
        rt.store.db.execute("UPDATE inbox SET received_at = received_at - 60")
        rt.store.db.execute("UPDATE deliveries SET claimed_until = 0 WHERE status = 'pending'")
        local = LocalDispatcher()
        local.bind(rt)
        rt.dispatcher = local

        async def recover():
            await sweep(rt)
            await local.idle()
            await sweep(rt)

        asyncio.run(recover())
        stack.wait(stack.settled)
        done = rt.store.inbox.get(entry["user_id"], entry["id"])
        assert done.status == "done"
        expected = "child answer" if step in ("before_delivery", "after_delivery") else (
            "re: crash me")
        assert done.reply == expected
        assert replies(stack, platform) == [expected]
        assert rt.store.db.scalar("SELECT count(*) FROM deliveries") == 1
        assert rt.store.db.scalar("SELECT status FROM deliveries") == "sent"
