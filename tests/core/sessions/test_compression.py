import asyncio
import time

import pytest

from core.contracts.prompt import conversation_tail
from core.errors import ProviderError
from core.messages import InboundMessage, Message, ToolCall
from core.search.engine import search_messages
from core.sessions.compression import DEFAULT_WINDOW, context_window, estimate_tokens
from core.sessions.summarise import SUMMARY_INSTRUCTIONS
from functions.ingress import receive

WINDOW = 20_000
SUMMARY = "## Goal\nplan the move\n## Key facts\n- flat-12 costs 1400"


def send(rt, text, pmid):
    message = InboundMessage(platform="http", chat_id="alice", account="http:alice",
                             platform_message_id=pmid, text=text)

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def is_summary_request(messages):
    return messages[0].content == SUMMARY_INSTRUCTIONS


def answering(main_reply, summary=SUMMARY, fail_summary=None):
    def step(messages):
        if is_summary_request(messages):
            if fail_summary is not None:
                return fail_summary
            return summary
        return main_reply
    return step


@pytest.fixture
def rt(runtime):
    runtime.settings = runtime.settings.model_copy(update={"context_window": WINDOW})
    runtime.after_turn = []  # reviews and titles call the model too; these tests count calls
    return runtime


def seed_long_session(rt, count=400, *, tool_every=0):
    store = rt.store
    user = store.users.for_account("http:alice")
    session = store.sessions.current(user, "http:alice", "http", idle_seconds=3600,
                                     at=time.time())
    batch = []
    for i in range(count):
        if tool_every and i % tool_every == 3:
            call = ToolCall(id=f"c{i}", name="terminal", arguments='{"command": "ls"}')
            batch.append(Message(role="assistant", content="", tool_calls=(call,)))
            batch.append(Message(role="tool", content=f"out{i} " + "x" * 3000,
                                 tool_call_id=f"c{i}", name="terminal"))
            continue
        role = "user" if i % 2 == 0 else "assistant"
        batch.append(Message(role=role, content=f"message {i} marker{i}x " + "words " * 60))
    with store.db.transaction():
        store.messages.insert(user, session.id, batch, at=time.time())
    return user, session


def main_requests(scripted):
    return [r for r in scripted.requests if not is_summary_request(r)]


def test_400_messages_compress_to_fit_and_stay_stored_and_searchable(rt, scripted):
    user, session = seed_long_session(rt)
    scripted.then(*[answering("ok, continuing")] * 12)
    entry = send(rt, "where were we?", "1")
    assert entry.status == "done" and entry.session_id == session.id
    [prompt] = main_requests(scripted)
    budget = WINDOW * rt.settings.compression_threshold
    assert estimate_tokens(prompt) <= budget
    assert prompt[0].content == rt.store.sessions.get(user, session.id).system_prompt
    assert prompt[-1].content == "where were we?"
    summary_in_prompt = [m for m in prompt if SUMMARY in m.content]
    assert len(summary_in_prompt) == 1 and "Context summary" in summary_in_prompt[0].content
    assert any("marker0x" in m.content for m in prompt), "the first exchange is kept"
    assert any("marker399x" in m.content for m in prompt), "the recent tail is kept"
    assert not any("marker200x" in m.content for m in prompt)

    stored = rt.store.messages.for_session(user, session.id)
    assert len(stored) == 402
    compacted = [m for m in stored if m.compacted]
    assert len(compacted) > 300
    assert all(f"marker{i}x" in stored[i].message.content for i in range(400))
    [hit] = search_messages(rt.store, user, "marker200x")
    assert hit.compacted
    summary = rt.store.compaction.latest(user, session.id)
    assert summary.content == SUMMARY and summary.compacted_count == len(compacted)
    summary_requests = [r for r in scripted.requests if is_summary_request(r)]
    assert len(summary_requests) >= 2, "a long middle is folded in chunk by chunk"
    assert "Summary so far:" in summary_requests[1][1].content


def test_later_turns_use_the_summary_and_a_second_compression_updates_it(rt, scripted):
    user, session = seed_long_session(rt)
    scripted.then(*[answering("first")] * 12)
    send(rt, "turn one", "1")
    rt.settings = rt.settings.model_copy(update={"context_window": 200_000})
    scripted.requests.clear()
    scripted.steps.clear()
    scripted.then(answering("second"))
    send(rt, "turn two", "2")
    [prompt] = scripted.requests
    assert [m.content for m in prompt[-3:]] == ["turn one", "first", "turn two"]
    assert sum(SUMMARY in m.content for m in prompt) == 1
    assert not any("marker200x" in m.content for m in prompt)

    scripted.requests.clear()
    scripted.steps.clear()
    scripted.then(*[answering("third", summary="## Goal\nupdated")] * 4)
    rt.settings = rt.settings.model_copy(update={"context_window": 2_000})
    send(rt, "turn three " + "y" * 3000, "3")
    folded = [r for r in scripted.requests if is_summary_request(r)]
    assert folded and "Summary so far:\n" + SUMMARY in folded[0][1].content
    history = rt.store.compaction.history(user, session.id)
    assert [s.content for s in history] == [SUMMARY, "## Goal\nupdated"]
    assert history[1].first_message_id == history[0].first_message_id
    assert rt.store.messages.count(user, session.id) == 406


def test_a_failed_summary_leaves_the_prompt_unchanged_and_backs_off(rt, scripted):
    user, session = seed_long_session(rt)
    expected_history = conversation_tail(
        rt.store.messages.tail(user, session.id, limit=rt.settings.history_messages)
    )
    failure = ProviderError("unavailable", "side model down", retryable=True)
    scripted.then(answering("answered anyway", fail_summary=failure))
    scripted.then(answering("answered anyway"))
    entry = send(rt, "still there?", "1")
    assert entry.status == "done" and entry.reply == "answered anyway"
    [prompt] = main_requests(scripted)
    assert prompt[1:-1] == expected_history
    assert rt.store.db.scalar("SELECT count(*) FROM messages WHERE compacted = 1") == 0
    assert rt.store.compaction.latest(user, session.id) is None
    state = rt.store.compaction.state(user, session.id)
    assert state.failures == 1 and state.retry_at > time.time() + 60
    assert "side model down" in state.last_error

    scripted.requests.clear()
    scripted.then(answering("no summary attempt while backing off"))
    send(rt, "and now?", "2")
    assert len(scripted.requests) == 1 and not is_summary_request(scripted.requests[0])


def test_old_tool_outputs_are_shortened_first_without_a_summary(rt, scripted):
    user, session = seed_long_session(rt, count=60, tool_every=4)
    rt.settings = rt.settings.model_copy(update={"context_window": 30_000})
    scripted.then(answering("fine"))
    send(rt, "go on", "1")
    [prompt] = scripted.requests
    tool_results = [m for m in prompt if m.role == "tool"]
    assert tool_results and all("shortened from" in m.content for m in tool_results[:-1])
    assert rt.store.compaction.latest(user, session.id) is None
    long_outputs = rt.store.db.scalar(
        "SELECT count(*) FROM messages WHERE role = 'tool' AND length(content) > 3000")
    assert long_outputs == len(tool_results)


def test_compress_command_forces_a_summary(rt, scripted):
    short = send(rt, "/compress", "0")
    assert "Nothing to compress" in short.reply
    user, session = seed_long_session(rt, count=20)
    rt.settings = rt.settings.model_copy(update={"context_window": 1_000_000})
    scripted.then(answering("unused"))
    entry = send(rt, "/compress", "1")
    assert entry.reply.startswith("Compressed ") and "searchable" in entry.reply
    assert rt.store.compaction.latest(user, session.id).content == SUMMARY
    usage = send(rt, "/usage", "2")
    assert "earlier messages are summarised" in usage.reply


def test_context_window_sources(settings):
    from core.model.llm import LiteLLMModel

    class Declared:
        context_window = 4096

    assert asyncio.run(context_window(Declared(), settings)) == 4096
    assert asyncio.run(context_window(object(), settings)) == DEFAULT_WINDOW
    known = LiteLLMModel(name="openai/gpt-4o-mini")
    assert asyncio.run(context_window(known, settings)) == 128_000
    unknown = LiteLLMModel(name="openai/some-local-model")
    assert asyncio.run(context_window(unknown, settings)) == DEFAULT_WINDOW
    fixed = settings.model_copy(update={"context_window": 9000})
    assert asyncio.run(context_window(known, fixed)) == 9000
