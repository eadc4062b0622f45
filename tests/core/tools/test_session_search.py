import asyncio

from core.contracts.toolkit import ToolContext
from core.messages import InboundMessage
from core.store.transcripts import ImportedMessage
from core.tools.session_search import SessionSearch, SessionSearchArgs
from functions.ingress import receive
from iris_testing.scripted_model import call, tool_calls


def send(rt, text, pmid, account="http:alice", chat="alice"):
    message = InboundMessage(platform="http", chat_id=chat, account=account,
                             platform_message_id=pmid, text=text)

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def run_tool(rt, user_id, current="ses_x", **args):
    ctx = ToolContext(store=rt.store, settings=rt.settings, user_id=user_id,
                      session_id=current, chat_key="http:alice", platform="http",
                      account="http:alice", services=rt.services)
    return asyncio.run(SessionSearch().run(ctx, SessionSearchArgs(**args)))


def test_the_current_session_is_searchable_in_the_same_session(runtime, scripted):
    scripted.then("Noted, the gate code is 7291.")
    first = send(runtime, "remember: the gate code is 7291", "1")
    scripted.then(tool_calls(call("session_search", query="gate code")), "It is 7291.")
    second = send(runtime, "what was the gate code?", "2")
    assert second.session_id == first.session_id
    result = scripted.requests[-1][-1].content
    assert "7291" in result and "[this session]" in result
    assert second.reply == "It is 7291."


def test_results_are_grouped_with_neighbours_and_titles(runtime):
    store = runtime.store
    user = store.users.for_account("http:alice")
    texts = ["hi", "hello", "which bike should I buy?", "a gravel bike suits you", "thanks", "bye"]
    store.transcripts.import_session(
        user, external_id="bikes", started_at=1_700_000_000.0, title="Bike shopping",
        messages=[ImportedMessage(role="user" if i % 2 == 0 else "assistant", content=t,
                                  created_at=1_700_000_000.0 + i) for i, t in enumerate(texts)],
    )
    out = run_tool(runtime, user, query="gravel")
    assert 'Session bikes "Bike shopping"' in out
    assert "» #4" in out and "a gravel bike suits you" in out
    assert "which bike should I buy?" in out and "thanks" in out
    assert "hello" not in out
    around = run_tool(runtime, user, query=None, around_message_id=4, window=3)
    assert all(t in around for t in texts)


def test_bad_arguments_are_explained(runtime):
    from core.errors import ToolRetry

    user = runtime.store.users.for_account("http:alice")
    for args in ({"query": ""}, {"query": "x", "since": "yesterday"},
                 {"query": "x", "session_id": "nope"}, {"around_message_id": 999}):
        try:
            run_tool(runtime, user, **args)
        except ToolRetry as exc:
            assert str(exc)
        else:
            raise AssertionError(f"{args} was accepted")


def test_archived_memory_entries_are_searched_too(runtime):
    store = runtime.store
    user = store.users.for_account("http:alice")
    other = store.users.for_account("http:bob")
    for owner, text in ((user, "prefers window seats on long flights"),
                        (other, "bob prefers window seats too")):
        store.db.execute(
            "INSERT INTO memory_archive (id, user_id, target, content, reason, archived_at)"
            " VALUES (?, ?, 'user', ?, 'store full', 1700000000)", (f"arc-{owner}", owner, text),
        )
    out = run_tool(runtime, user, query="window seats")
    assert "Archived memory entries" in out and "prefers window seats on long flights" in out
    assert "bob" not in out


def test_summarize_asks_the_side_model(runtime, scripted):
    user = runtime.store.users.for_account("http:alice")
    runtime.store.transcripts.import_session(
        user, external_id="s1", started_at=1.0, title=None,
        messages=[ImportedMessage(role="user", content="the router password is hunter2",
                                  created_at=1.0)],
    )
    scripted.then("They set the router password to hunter2 in s1.")
    out = run_tool(runtime, user, query="router password", summarize=True)
    assert out.startswith("Summary: They set the router password")
    assert "router password" in scripted.requests[-1][-1].content
