"""Interactive first: on one shared model a chat turn is not queued behind scheduled runs.
The scripted model holds each call until the test releases it; the test waits on events."""

import asyncio
from dataclasses import dataclass, field

import pytest

from core.messages import InboundMessage, Message, Usage
from core.model.llm import ModelResponse
from core.scheduler.manage import Actor, create_job
from functions.cron import run_now
from functions.dispatch import LocalDispatcher
from functions.ingress import receive
from functions.runtime import compose
from iris_testing.scripted_model import FixedRouter, call, tool_calls

CRON_PROMPT = "Summarise the news"


@dataclass
class HeldModel:
    """Each call is labelled by who asked ("chat" or "cron") and held until released."""

    name: str = "openai/one-local-model"
    calls: list[str] = field(default_factory=list)
    started: dict[str, asyncio.Event] = field(default_factory=dict)
    release: dict[str, asyncio.Event] = field(default_factory=dict)
    cron_steps: int = 0

    def event(self, table, key):
        return table.setdefault(key, asyncio.Event())

    async def complete(self, messages, tools=()):
        who = "cron" if any(CRON_PROMPT in (m.content or "") for m in messages) else "chat"
        step = f"{who}{sum(1 for c in self.calls if c.startswith(who)) + 1}"
        self.calls.append(step)
        self.event(self.started, step).set()
        await self.event(self.release, step).wait()
        usage = Usage(model=self.name, prompt_tokens=1, completion_tokens=1)
        if step == "cron1":  # the scheduled turn takes two steps
            return ModelResponse(tool_calls(call("clock", timezone="UTC")), usage)
        return ModelResponse(Message(role="assistant", content=f"answer to {who}"), usage)


def setup(settings, store, *, interactive_first):
    model = HeldModel()
    configured = settings.model_copy(update={"model": model.name,
                                             "interactive_first": interactive_first})
    rt = compose(configured, dispatcher=LocalDispatcher(), store=store, router=FixedRouter(model))
    return rt, model


async def start_job(rt):
    user_id = rt.store.users.for_account("http:alice")
    job = await create_job(rt.store, rt.settings, Actor(user_id=user_id, account="http:alice"),
                           prompt=CRON_PROMPT, schedule="every 1h", deliver="none")
    await run_now(rt, user_id, job.id)


async def chat(rt, text="hello"):
    await receive(rt, InboundMessage(platform="http", chat_id="alice", account="http:alice",
                                     platform_message_id=f"http:alice:{text}", text=text))


async def released(model, step):
    await model.event(model.started, step).wait()
    model.event(model.release, step).set()


@pytest.mark.parametrize("interactive_first", [True, False])
def test_a_scheduled_run_waits_for_a_running_chat_turn(settings, store, interactive_first):
    rt, model = setup(settings, store, interactive_first=interactive_first)

    async def scenario():
        await chat(rt)
        await model.event(model.started, "chat1").wait()
        await start_job(rt)
        if interactive_first:
            await rt.priority.wait_until_waiting()
            assert model.calls == ["chat1"]  # the run waits; the chat's call is alone
        else:
            await model.event(model.started, "cron1").wait()
            assert model.calls == ["chat1", "cron1"]  # both on the one model at once
        await released(model, "chat1")
        await released(model, "cron1")
        await released(model, "cron2")
        await rt.dispatcher.idle()

    asyncio.run(scenario())
    assert model.calls == ["chat1", "cron1", "cron2"]


def test_a_chat_turn_waits_at_most_for_the_scheduled_call_in_flight(settings, store):
    rt, model = setup(settings, store, interactive_first=True)

    async def scenario():
        await start_job(rt)
        await model.event(model.started, "cron1").wait()
        await chat(rt)
        await model.event(model.started, "chat1").wait()  # not behind the scheduled run
        model.event(model.release, "cron1").set()
        await rt.priority.wait_until_waiting()  # the run's next step gives way
        assert model.calls == ["cron1", "chat1"]
        await released(model, "chat1")
        await released(model, "cron2")
        await rt.dispatcher.idle()

    asyncio.run(scenario())
    assert model.calls == ["cron1", "chat1", "cron2"]
    statuses = store.db.query("SELECT platform, status FROM inbox ORDER BY id")
    assert [(r["platform"], r["status"]) for r in statuses] == [("cron", "done"), ("http", "done")]
