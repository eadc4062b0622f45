import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.contracts.dispatch import ChatRef
from core.messages import InboundMessage
from functions import worker
from functions.ingress import receive
from functions.sweeper import sweep
from iris_testing.scripted_model import call, tool_calls
from iris_testing.waiting import until
from tests.functions import crash_worker

ROOT = Path(__file__).resolve().parents[2]


def message(pmid, text="hi", chat="alice"):
    return InboundMessage(
        platform="http", chat_id=chat, account=f"http:{chat}", platform_message_id=pmid, text=text
    )


def test_duplicate_delivery_runs_one_turn(runtime, scripted):
    scripted.then("only once")

    async def go():
        first = await receive(runtime, message("m1"))
        again = await receive(runtime, message("m1"))
        await runtime.dispatcher.idle()
        return first, again

    first, again = asyncio.run(go())
    assert again.duplicate and again.entry_id == first.entry_id
    assert len(scripted.requests) == 1


def test_a_held_lease_means_another_worker_drains(runtime, scripted):
    scripted.then("a")

    async def go():
        received = await receive(runtime, message("m1"))
        await runtime.dispatcher.idle()
        return received

    user = runtime.store.users.for_account("http:alice")
    runtime.store.leases.acquire(f"chat:{user}:http:alice", user, "someone-else", ttl=60)
    received = asyncio.run(go())
    assert runtime.store.inbox.get(user, received.entry_id).status == "pending"
    assert scripted.requests == []


def test_messages_arriving_during_a_drain_are_all_processed_in_order(runtime, scripted):
    seen = []

    def answer(messages):
        seen.append(messages[-1].content)
        return f"re: {messages[-1].content}"

    scripted.then(*[answer] * 5)

    async def go():
        for i in range(5):
            await receive(runtime, message(f"m{i}", text=str(i)))
            await asyncio.sleep(0)
        await runtime.dispatcher.idle()

    asyncio.run(go())
    assert seen == ["0", "1", "2", "3", "4"]


def run_crashing_worker(runtime, user, step):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.run(
        [sys.executable, "-m", "tests.functions.crash_worker", user, "http:alice", step],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert child.returncode == crash_worker.EXIT_CODE, child.stderr


@pytest.mark.parametrize("step", ["after_lease", "after_model", "after_tools", "before_commit"])
def test_a_worker_killed_mid_turn_is_resumed_exactly_once(runtime, scripted, step):
    scripted.then(tool_calls(call("clock")), "recovered answer")
    user = runtime.store.users.for_account("http:alice")
    entry_id = runtime.store.inbox.add(user, message("m1"))
    run_crashing_worker(runtime, user, step)

    entry = runtime.store.inbox.get(user, entry_id)
    assert entry.status == "pending"
    assert runtime.store.messages.count(user) == 0
    chat = ChatRef(user, "http:alice")
    assert runtime.store.leases.holder(worker.lease_name(chat)) is not None
    assert asyncio.run(worker.drain(runtime, chat)) == 0  # the dead worker's lease still holds
    runtime.store.db.execute("UPDATE leases SET expires_at = 0")
    runtime.store.db.execute("UPDATE inbox SET received_at = received_at - 60")

    async def recover():
        await sweep(runtime)
        await runtime.dispatcher.idle()

    asyncio.run(recover())
    entry = runtime.store.inbox.get(user, entry_id)
    assert (entry.status, entry.reply) == ("done", "recovered answer")
    stored = runtime.store.messages.for_session(user, entry.session_id)
    assert [m.message.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert runtime.store.usage.totals(user).calls == 2


def test_a_worker_killed_after_commit_keeps_the_turn(runtime, scripted):
    user = runtime.store.users.for_account("http:alice")
    entry_id = runtime.store.inbox.add(user, message("m1"))
    run_crashing_worker(runtime, user, "before_delivery")
    runtime.store.db.execute("UPDATE leases SET expires_at = 0")
    runtime.store.db.execute("UPDATE inbox SET received_at = received_at - 60")
    asyncio.run(sweep(runtime))
    entry = runtime.store.inbox.get(user, entry_id)
    assert (entry.status, entry.reply) == ("done", "child answer")
    assert scripted.requests == []


def test_a_poison_message_is_given_up_after_max_attempts(runtime, scripted):
    user = runtime.store.users.for_account("http:alice")
    entry_id = runtime.store.inbox.add(user, message("m1"))
    for _ in range(worker.MAX_ATTEMPTS):
        runtime.store.inbox.mark_started(user, entry_id)
    asyncio.run(worker.drain(runtime, ChatRef(user, "http:alice")))
    entry = runtime.store.inbox.get(user, entry_id)
    assert entry.status == "failed" and "failed several times" in entry.reply
    assert scripted.requests == []


def test_a_drain_cancelled_while_taking_lets_the_lease_go(runtime, scripted):
    """A closing event loop cancels its drain tasks; one cancelled while its take is in the
    store lane (the lease already got) must still let the lease go, or the chat waits out the
    lease (what the cronjob tool's `run` showed in CI)."""
    import threading

    user = runtime.store.users.for_account("http:alice")
    chat = ChatRef(user, "http:alice")
    entry_id = runtime.store.inbox.add(user, message("m1"))
    real_take = runtime.store.drains.take
    taken, go_on = threading.Event(), threading.Event()

    def slow_take(*args, **kwargs):
        got = real_take(*args, **kwargs)
        taken.set()
        assert go_on.wait(60), "the test never let the take finish"
        return got

    runtime.store.drains.take = slow_take

    async def cancel_mid_take():
        task = asyncio.create_task(worker.drain(runtime, chat))
        await until(taken.is_set, "the take to get the chat's lease")
        assert runtime.store.leases.holder(worker.lease_name(chat)) is not None
        task.cancel()
        await asyncio.sleep(0)
        go_on.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(cancel_mid_take())
    finally:
        runtime.store.drains.take = real_take
    assert runtime.store.leases.holder(worker.lease_name(chat)) is None
    assert scripted.requests == []
    scripted.then("after all")
    assert asyncio.run(worker.drain(runtime, chat)) == 1
    assert runtime.store.inbox.get(user, entry_id).reply == "after all"
