import asyncio
import sys

import pytest

from core.messages import InboundMessage
from functions.tick import TickFailed, cron_tick, run_tick


def stalled(runtime, text="hello"):
    store = runtime.store
    user_id = store.users.for_account("http:carol")
    message = InboundMessage(platform="http", chat_id="carol", account="http:carol",
                             platform_message_id=f"m-{text}", text=text)
    entry_id = store.inbox.add(user_id, message)
    store.db.execute("UPDATE inbox SET received_at = received_at - 60 WHERE id = ?", (entry_id,))
    return user_id, entry_id


def test_cron_runs_before_the_sweep_and_both_report(runtime, scripted):
    order = []

    async def cron(rt):
        order.append(("cron", rt is runtime))
        return {"jobs": 0}

    user_id, entry_id = stalled(runtime)
    scripted.then("swept")

    async def go():
        report = await run_tick(runtime, cron=cron)
        await runtime.dispatcher.idle()
        return report

    report = asyncio.run(go())
    assert order == [("cron", True)]
    assert report.cron_ran and report.cron == {"jobs": 0}
    assert report.sweep.chats_resumed == 1
    assert runtime.store.inbox.get(user_id, entry_id).reply == "swept"


def test_a_failing_cron_still_sweeps_then_fails_the_tick(runtime, scripted):
    def cron(rt):
        raise RuntimeError("jobs table missing")

    stalled(runtime)
    scripted.then("still answered")

    async def go():
        try:
            await run_tick(runtime, cron=cron)
        finally:
            await runtime.dispatcher.idle()

    with pytest.raises(TickFailed, match="cron: RuntimeError: jobs table missing") as caught:
        asyncio.run(go())
    assert caught.value.report.sweep.chats_resumed == 1


def test_cron_tick_is_found_when_its_module_exists(tmp_path, monkeypatch):
    (tmp_path / "iris_cron_probe.py").write_text("def tick(rt):\n    return 'ran'\n")
    (tmp_path / "iris_cron_empty.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cron_tick("iris_cron_probe")(None) == "ran"
    assert cron_tick("iris_cron_empty") is None
    assert cron_tick("iris_no_such_module") is None
    for name in ("iris_cron_probe", "iris_cron_empty"):
        sys.modules.pop(name, None)


def test_without_a_cron_module_the_tick_only_sweeps(runtime):
    if cron_tick() is not None:
        pytest.skip("functions.cron exists now; its tick is covered by its own tests")
    report = asyncio.run(run_tick(runtime))
    assert not report.cron_ran and report.sweep.chats_resumed == 0
