"""``/model`` and a job's ``model`` over real HTTP: a chat user picks only from
``allowed_models`` (default: the main and side models), an owner picks anything, and the next
turn's request reaches the scripted model server under the chosen name."""

from __future__ import annotations

import pytest

from core.scheduler.jobs import CronJobs
from iris_testing.llm_server import ScriptedLLM
from tests.fakes.stack import emulator_stack

OWNER = "boss"


@pytest.fixture
def llm():
    return ScriptedLLM()


def ask(stack, text, user="alice"):
    answer = stack.client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=user)
    return answer.choices[0].message.content


@pytest.fixture
def stack(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch, IRIS_CHEAP_MODEL="openai/scripted-cheap",
                        IRIS_OWNER_ACCOUNTS=f"http:{OWNER}") as running:
        yield running


def test_a_chat_user_cannot_pick_a_model_outside_the_allowed_ones(stack, llm):
    reply = ask(stack, "/model bedrock/anthropic.claude-v2")
    assert "not one of the models this Iris allows" in reply
    assert "openai/scripted-model" in reply and "openai/scripted-cheap" in reply
    user = stack.runtime.store.users.resolve("http:alice")
    assert stack.runtime.store.users.get(user).model is None
    assert llm.requests == []  # a command never calls the model

    llm.reply("still the default")
    assert ask(stack, "hello") == "still the default"
    assert llm.requests[-1]["model"] == "scripted-model"


def test_a_chat_user_may_pick_the_side_model(stack, llm):
    assert ask(stack, "/model openai/scripted-cheap") == (
        "Switched your model to openai/scripted-cheap.")
    llm.reply("cheap answer")
    assert ask(stack, "hello") == "cheap answer"
    assert llm.requests[-1]["model"] == "scripted-cheap"
    assert "allowed: openai/scripted-model, openai/scripted-cheap" in ask(stack, "/model")


def test_an_owner_picks_any_model(stack, llm):
    assert ask(stack, "/model openai/owner-pick", user=OWNER) == (
        "Switched your model to openai/owner-pick.")
    llm.reply("from the owner's pick")
    assert ask(stack, "hello", user=OWNER) == "from the owner's pick"
    assert llm.requests[-1]["model"] == "owner-pick"


def test_a_malformed_name_is_refused_for_everyone(stack):
    assert "looks like provider/model" in ask(stack, "/model gpt4", user=OWNER)


def test_the_cronjob_tool_obeys_the_same_rule(stack, llm):
    store = stack.runtime.store
    llm.tool_call("cronjob", {"action": "create", "prompt": "Summarise the news.",
                              "schedule": "daily at 09:00", "model": "openai/o1-pro"})
    llm.reply("I could not use that model.")
    assert ask(stack, "every day summarise the news with o1-pro") == "I could not use that model."
    tool_result = llm.requests[1]["messages"][-1]
    assert tool_result["role"] == "tool"
    assert "openai/o1-pro is not one of the models this Iris allows" in tool_result["content"]
    alice = store.users.resolve("http:alice")
    assert CronJobs(store).list(alice) == []

    llm.tool_call("cronjob", {"action": "create", "prompt": "Summarise the news.",
                              "schedule": "daily at 09:00", "model": "openai/o1-pro"})
    llm.reply("Scheduled.")
    assert ask(stack, "the same for me", user=OWNER) == "Scheduled."
    (job,) = CronJobs(store).list(store.users.resolve(f"http:{OWNER}"))
    assert job.model == "openai/o1-pro"


def test_an_update_to_a_job_model_is_checked_too(stack, llm):
    store = stack.runtime.store
    llm.tool_call("cronjob", {"action": "create", "prompt": "Say hi.", "name": "hi",
                              "schedule": "daily at 09:00", "model": "openai/scripted-cheap"})
    llm.reply("Scheduled.")
    assert ask(stack, "say hi every day, cheaply") == "Scheduled."
    alice = store.users.resolve("http:alice")
    (job,) = CronJobs(store).list(alice)
    assert job.model == "openai/scripted-cheap"

    llm.tool_call("cronjob", {"action": "update", "job_id": "hi", "model": "openai/o1-pro"})
    llm.reply("Not changed.")
    assert ask(stack, "use o1-pro for it") == "Not changed."
    assert "not one of the models" in llm.requests[-1]["messages"][-1]["content"]
    assert CronJobs(store).get(alice, job.id).model == "openai/scripted-cheap"


def test_an_explicit_list_replaces_the_default(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch,
                        IRIS_ALLOWED_MODELS="openai/scripted-model,openai/second") as stack:
        assert ask(stack, "/model openai/second") == "Switched your model to openai/second."
        reply = ask(stack, "/model openai/scripted-cheap")
        assert "(openai/scripted-model, openai/second)" in reply

