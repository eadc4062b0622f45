import asyncio

from core.errors import ProviderError
from core.messages import InboundMessage
from functions.ingress import receive
from iris_testing.scripted_model import call, tool_calls


def send(rt, text, pmid, account="http:alice", chat="alice", session=None):
    message = InboundMessage(
        platform="http", chat_id=chat, account=account, platform_message_id=pmid, text=text,
        session_hint=session,
    )

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def roles(rt, entry):
    stored = rt.store.messages.for_session(entry.user_id, entry.session_id)
    return [m.message.role for m in stored]


def test_plain_answer_is_persisted(runtime, scripted):
    scripted.then("Hello Alice.")
    entry = send(runtime, "hi", "1")
    assert (entry.status, entry.reply) == ("done", "Hello Alice.")
    assert roles(runtime, entry) == ["user", "assistant"]
    system = scripted.requests[0][0]
    assert system.role == "system" and "You are Iris" in system.content
    assert {"clock", "load_tools"} <= set(scripted.tools_seen[0])


def test_several_tool_calls_in_one_response_all_run(runtime, scripted):
    scripted.then(
        tool_calls(call("clock", timezone="Asia/Tokyo"), call("clock", timezone="Europe/Paris")),
        "Done.",
    )
    entry = send(runtime, "times?", "1")
    stored = runtime.store.messages.for_session(entry.user_id, entry.session_id)
    tool_results = [m.message for m in stored if m.message.role == "tool"]
    assert len(tool_results) == 2
    assert "Asia/Tokyo" in tool_results[0].content and "Europe/Paris" in tool_results[1].content
    second_request = scripted.requests[1]
    assert [m.role for m in second_request[-3:]] == ["assistant", "tool", "tool"]


def test_tool_errors_go_back_to_the_model(runtime, scripted):
    scripted.then(
        tool_calls(
            call("clock", timezone="Mars/Base"),
            call("no_such_tool"),
            call("clock", timezone=42),
        ),
        "Sorry.",
    )
    entry = send(runtime, "time on mars?", "1")
    assert entry.status == "done"
    results = [m.content for m in scripted.requests[1] if m.role == "tool"]
    assert "unknown timezone 'Mars/Base'" in results[0]
    assert "there is no tool named 'no_such_tool'" in results[1]
    assert "invalid arguments for clock" in results[2]


def test_malformed_tool_arguments_are_reported(runtime, scripted):
    from core.messages import Message, ToolCall

    bad = Message(role="assistant", content="", tool_calls=(
        ToolCall(id="c1", name="clock", arguments="{not json"),))
    scripted.then(bad, "ok")
    send(runtime, "x", "1")
    assert "not a JSON object" in scripted.requests[1][-1].content


def test_iteration_cap_stops_the_loop(runtime, scripted):
    cap = runtime.settings.max_iterations
    scripted.then(*[tool_calls(call("clock")) for _ in range(cap)])
    entry = send(runtime, "loop", "1")
    assert entry.status == "done"
    assert f"stopped after {cap} steps" in entry.reply
    assert len(scripted.requests) == cap


def test_provider_failure_becomes_a_clear_reply(runtime, scripted):
    scripted.then(ProviderError("auth", "invalid api key", retryable=False))
    entry = send(runtime, "hi", "1")
    assert entry.status == "failed"
    assert entry.error.startswith("auth:")
    assert "rejected the API key" in entry.reply
    assert roles(runtime, entry) == ["user"]


def test_history_and_frozen_system_prompt_carry_across_turns(runtime, scripted):
    scripted.then("one", "two")
    send(runtime, "first", "1")
    send(runtime, "second", "2")
    first, second = scripted.requests
    assert first[0].content == second[0].content
    assert [m.content for m in second[1:]] == ["first", "one", "second"]


def test_new_command_starts_a_session_without_a_model_call(runtime, scripted):
    scripted.then("one", "fresh")
    before = send(runtime, "first", "1")
    reset = send(runtime, "/new", "2")
    assert reset.reply == "Started a new session."
    assert reset.session_id != before.session_id
    after = send(runtime, "again", "3")
    assert after.session_id == reset.session_id
    assert [m.content for m in scripted.requests[-1][1:]] == ["again"]


def test_unknown_command_gets_help_not_a_model_call(runtime, scripted):
    entry = send(runtime, "/frobnicate now", "1")
    assert "Unknown command /frobnicate" in entry.reply and "/new" in entry.reply
    assert scripted.requests == []


def test_session_info_tool_reports_the_session(runtime, scripted):
    scripted.then(tool_calls(call("session_info")), "ok")
    entry = send(runtime, "where am I", "1")
    result = scripted.requests[1][-1].content
    assert entry.session_id in result and "stored messages" in result


def test_users_never_share_history(runtime, scripted):
    scripted.then("for alice", "for bob")
    send(runtime, "alice secret: 1234", "1")
    send(runtime, "hello", "2", account="http:bob", chat="bob")
    bob_request = scripted.requests[1]
    assert all("1234" not in m.content for m in bob_request)


def test_a_model_repeating_the_same_call_is_made_to_answer(runtime, scripted):
    scripted.then(
        tool_calls(call("clock", timezone="UTC")),
        tool_calls(call("clock", timezone="UTC")),
        tool_calls(call("clock", timezone="UTC")),
        "It is noon.",
    )
    entry = send(runtime, "time?", "1")
    assert entry.reply == "It is noon."
    assert all(scripted.tools_seen[i] for i in range(3))
    assert scripted.tools_seen[3] == []


def test_different_calls_are_not_a_loop(runtime, scripted):
    scripted.then(
        tool_calls(call("clock", timezone="UTC")),
        tool_calls(call("clock", timezone="Asia/Tokyo")),
        tool_calls(call("clock", timezone="Europe/Paris")),
        "done",
    )
    send(runtime, "times?", "1")
    assert all(scripted.tools_seen[i] for i in range(4))


def test_an_empty_answer_is_asked_for_again_without_tools(runtime, scripted):
    scripted.then("", "Here it is.")
    entry = send(runtime, "hi", "1")
    assert entry.reply == "Here it is."
    assert scripted.tools_seen[0] and scripted.tools_seen[1] == []
    stored = runtime.store.messages.for_session(entry.user_id, entry.session_id)
    assert [m.message.content for m in stored] == ["hi", "Here it is."]


def test_two_empty_answers_end_the_turn_plainly(runtime, scripted):
    scripted.then("", "")
    entry = send(runtime, "hi", "1")
    assert entry.reply == "(the model returned an empty answer)"
    assert len(scripted.requests) == 2
