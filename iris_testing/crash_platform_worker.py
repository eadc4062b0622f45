"""A worker killed at a named step of a turn, with replies going to the parent's fake platform
(Telegram, Slack, WhatsApp, Discord or the SMTP server):
``python -m iris_testing.crash_platform_worker USER CHAT STEP`` drains one chat
in a child process that dies (os._exit) at STEP (or, for ``wait_for_stop``, whose first model
step lasts until a /stop is recorded); ``crash_and_recover`` (parent side) records a
message through the webhook, runs that child, expires its lease and lets the sweeper finish."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXIT_CODE = 19
ROOT = Path(__file__).resolve().parents[1]
STEPS = ("after_lease", "after_model", "after_tools", "before_commit", "before_delivery",
         "after_delivery")


def main(user_id: str, chat_key: str, step: str) -> None:
    from core.config import load_settings
    from core.contracts.dispatch import ChatRef
    from core.messages import Message
    from functions import worker
    from functions.dispatch import LocalDispatcher
    from functions.runtime import compose
    from iris_testing.scripted_model import FixedRouter, ScriptedModel, call, tool_calls
    from iris_testing.waiting import wait_until

    model = ScriptedModel().then(tool_calls(call("clock")), "child answer")
    dispatcher = LocalDispatcher()
    rt = compose(load_settings(), dispatcher=dispatcher, router=FixedRouter(model))
    if step == "wait_for_stop":  # a long first step, until another process asks to stop
        def slow_step(messages: list[Message]) -> Message:
            Path(os.environ["IRIS_TEST_IN_MODEL"]).touch()
            wait_until(lambda: rt.store.db.scalar("SELECT count(*) FROM turn_cancels"),
                       "another process to ask for a stop")
            return tool_calls(call("clock"))

        model.steps = [slow_step, "child answer"]
    rt.after_turn = []

    def die(name: str) -> None:
        if name == step:
            os._exit(EXIT_CODE)

    rt.checkpoint = die
    asyncio.run(worker.drain(rt, ChatRef(user_id, chat_key)))


class HandOff:
    """Records the message and leaves its chat to another container's worker."""

    async def drain(self, chat: object) -> None:
        return None


@dataclass(frozen=True)
class Recovered:
    status: str
    reply: str | None
    sent: list[str]  # what the platform received
    deliveries: int
    delivery_status: str


def post_crash_me(stack: Any, platform: str) -> Any:
    if platform == "telegram":
        return stack.telegram_post(stack.telegram.make_update("crash me"))
    if platform == "whatsapp":
        return stack.whatsapp_post(stack.whatsapp.message_payload("crash me"))
    if platform == "discord":
        return stack.discord_post(stack.discord.interaction("ask", {"text": "crash me"}))
    if platform == "matrix":
        return stack.matrix_put(stack.matrix.transaction(stack.matrix.message_event("crash me")))
    if platform == "sms":
        return stack.sms_post(stack.twilio.inbound("crash me"))
    if platform == "line":
        return stack.line_post(stack.line.webhook(stack.line.message_event("crash me")))
    if platform == "teams":  # a stack started with ``jwt_platforms``
        body = json.dumps(stack.teams.activity("crash me")).encode()
        return stack.http.post(f"{stack.url}/teams/messages", content=body,
                               headers=stack.teams.headers())
    if platform == "googlechat":
        body = json.dumps(stack.googlechat.event("crash me")).encode()
        return stack.http.post(f"{stack.url}/googlechat/events", content=body,
                               headers=stack.googlechat.headers())
    if platform == "email":
        from iris_testing.mail_inbound import raw_mail

        return stack.email_post(raw_mail("crash me", subject=""))
    event = stack.slack.message_event("crash me", channel="D7", channel_type="im")
    return stack.slack_post(stack.slack.event_payload(event))


def crash_and_recover(stack: Any, step: str, platform: str) -> Recovered:
    from functions.dispatch import LocalDispatcher
    from functions.sweeper import sweep

    rt = stack.rt
    rt.dispatcher = HandOff()
    response = post_crash_me(stack, platform)
    assert response.status_code in (200, 202), response.text  # Teams acks with 202
    entry = rt.store.db.one("SELECT id, user_id, chat_key FROM inbox ORDER BY id DESC LIMIT 1")
    env = {**os.environ, **stack.env, "PYTHONPATH": str(ROOT)}
    child = subprocess.run(
        [sys.executable, "-m", "iris_testing.crash_platform_worker", entry["user_id"],
         entry["chat_key"], step],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    if child.returncode != EXIT_CODE:
        raise AssertionError(f"the child did not die at {step}: {child.stderr[-2000:]}")

    rt.store.db.execute("UPDATE leases SET expires_at = 0")
    rt.store.db.execute("UPDATE inbox SET received_at = received_at - 60")
    rt.store.db.execute("UPDATE deliveries SET claimed_until = 0 WHERE status = 'pending'")
    local = LocalDispatcher()
    local.bind(rt)  # the runtime was composed with a hand-off dispatcher; recover in-process
    rt.dispatcher = local

    async def recover() -> None:
        await sweep(rt)
        await local.idle()
        await sweep(rt)

    asyncio.run(recover())
    stack.wait(stack.settled)
    done = rt.store.inbox.get(entry["user_id"], entry["id"])
    from iris_testing.webhook_load import platform_texts

    sent = platform_texts(stack, platform)
    rows = rt.store.db.query("SELECT status FROM deliveries")
    return Recovered(done.status, done.reply, sent, len(rows),
                     rows[0]["status"] if rows else "none")


if __name__ == "__main__":
    main(*sys.argv[1:4])
