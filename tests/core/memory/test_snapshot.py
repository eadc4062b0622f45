"""The memory snapshot is a prompt section frozen when a session starts."""

import asyncio

from core.messages import InboundMessage
from functions.ingress import receive
from functions.runtime import default_sections
from iris_testing.scripted_model import call, tool_calls


def send(rt, text, pmid, account="http:alice", chat="alice"):
    message = InboundMessage(platform="http", chat_id=chat, account=account,
                             platform_message_id=pmid, text=text)

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def test_memory_section_follows_the_base_and_persona_sections():
    from core.memory.persona import persona_section
    from core.memory.snapshot import memory_section
    from core.turn.sections import base_section

    sections = default_sections()
    assert sections.index(base_section) < sections.index(persona_section)
    assert sections.index(memory_section) == sections.index(persona_section) + 1


def test_snapshot_is_frozen_for_the_session_and_fresh_in_the_next(runtime, scripted):
    scripted.then(
        tool_calls(call("memory", action="add", target="user", content="Likes green tea.")),
        "Noted.", "Sure.", "Hello again.",
    )
    first = send(runtime, "I like green tea, remember that", "1")
    assert first.reply == "Noted."
    send(runtime, "what do I like?", "2")
    before, during = scripted.requests[0][0].content, scripted.requests[2][0].content
    assert before == during and "Likes green tea." not in during
    assert "USER PROFILE [0% — 0/1,375 chars]\n(empty)" in during
    assert send(runtime, "/new", "3").reply == "Started a new session."
    send(runtime, "hi", "4")
    fresh = scripted.requests[-1][0].content
    assert "USER PROFILE [1% — 16/1,375 chars]\n[user] Likes green tea." in fresh
    assert fresh.index("You are Iris") < fresh.index("## Memory")
    (entry,) = runtime.store.memory.entries(first.user_id)
    assert (entry.provenance, entry.author, entry.session_id) == (
        "user", "http:alice", first.session_id)


def test_another_users_prompt_never_shows_it(runtime, scripted):
    scripted.then(
        tool_calls(call("memory", action="add", content="Alice's project codename is Falcon.")),
        "ok", "hello bob",
    )
    send(runtime, "our codename is Falcon", "1")
    send(runtime, "hi", "2", account="http:bob", chat="bob")
    assert "Falcon" not in scripted.requests[-1][0].content
