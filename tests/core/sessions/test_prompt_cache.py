import asyncio

from pydantic import SecretStr

from core.messages import InboundMessage
from core.model.prompt_cache import wants_cache_control, with_cache_control
from functions.dispatch import LocalDispatcher
from functions.ingress import receive
from functions.runtime import compose
from iris_testing.server import serve
from tests.core.sessions.anthropic_api import FakeAnthropic

MODEL = "anthropic/claude-3-5-haiku-20241022"


def marks(block):
    return block.get("cache_control") == {"type": "ephemeral"}


def test_breakpoints_on_system_and_last_messages():
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "u2"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]},
        {"role": "tool", "content": "result", "tool_call_id": "c"},
        {"role": "user", "content": "u3"},
    ]
    out = with_cache_control(messages)
    assert messages[0]["content"] == "sys", "the input is not modified"
    assert marks(out[0]["content"][0]) and out[0]["content"][0]["text"] == "sys"
    assert marks(out[-1]["content"][0]) and marks(out[-2]) and marks(out[3]["content"][0])
    assert out[1]["content"] == "u1" and out[2]["content"] == "a1" and out[4]["content"] == ""
    count = sum(
        1 for m in out for b in ([m] + (m["content"] if isinstance(m["content"], list) else []))
        if marks(b)
    )
    assert count == 4
    assert wants_cache_control(MODEL) and wants_cache_control("bedrock/anthropic.claude-3")
    assert not wants_cache_control("openai/gpt-4o")


def send(rt, text, pmid):
    message = InboundMessage(platform="http", chat_id="alice", account="http:alice",
                             platform_message_id=pmid, text=text)

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def test_anthropic_requests_carry_breakpoints_and_a_byte_identical_system_prompt(settings,
                                                                                 store):
    fake = FakeAnthropic(cache_read=1200, cache_write=300)
    fake.replies = ["one", "two", "three"]
    with serve(fake.app) as server:
        configured = settings.model_copy(update={
            "model": MODEL, "model_api_base": server.url, "model_api_key": SecretStr("sk-ant"),
            "api_key": SecretStr("k"), "model_retries": 0,
        })
        dispatcher = LocalDispatcher()
        rt = compose(configured, dispatcher=dispatcher, store=store)
        rt.after_turn = []
        replies = [send(rt, text, str(i)).reply for i, text in enumerate(["hi", "more", "end"])]
    assert replies == ["one", "two", "three"]
    assert len(fake.requests) == 3
    systems = [r["system"] for r in fake.requests]
    assert systems[0] == systems[1] == systems[2]
    assert len(systems[0]) == 1 and marks(systems[0][0]) and "You are Iris" in systems[0][0]["text"]
    last = fake.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    marked = [i for i, m in enumerate(last) if any(marks(b) for b in m["content"])]
    assert marked == [2, 3, 4]
    assert last[-1]["content"][-1]["text"] == "end"

    user = store.users.resolve("http:alice")
    totals = store.usage.totals(user)
    assert totals.cache_read_tokens == 3 * 1200 and totals.cache_write_tokens == 3 * 300
