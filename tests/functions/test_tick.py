import asyncio

import pytest

from core.clock import ManualClock
from core.messages import InboundMessage
from functions.tick import TickFailed, run_tick
from tests.clocks import NOW


@pytest.fixture
def clock():
    return ManualClock(NOW)


def stalled(runtime, text="hello"):
    store = runtime.store
    user_id = store.users.for_account("http:carol")
    message = InboundMessage(platform="http", chat_id="carol", account="http:carol",
                             platform_message_id=f"m-{text}", text=text)
    entry_id = store.inbox.add(user_id, message)
    store.clock.advance(60)  # past the sweeper's grace period
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


def test_skills_are_curated_once_a_day(runtime):
    from core.skills.library import SkillLibrary
    from core.skills.manage import SkillEditor

    user = runtime.store.users.for_account("http:dora")
    library = SkillLibrary(runtime.store, runtime.settings)
    body = "---\nname: old-trick\ndescription: An old trick nobody uses any more.\n---\nDo it.\n"
    SkillEditor(library, user, provenance="user").create("old-trick", body)
    runtime.store.clock.advance(40 * 86400)  # forty days unused

    async def noop(rt):
        return None

    first = asyncio.run(run_tick(runtime, cron=noop))
    second = asyncio.run(run_tick(runtime, cron=noop))
    assert first.curated == 1
    assert library.catalog.get(user, "old-trick").status == "stale"
    assert second.curated is None  # not again within the day
    runtime.store.clock.advance(86400 + 60)  # the first tick after the lease expires
    assert asyncio.run(run_tick(runtime, cron=noop)).curated == 0  # a day on: due, nothing new

