import asyncio
import re

import pytest

from core.acting.subagents import CHILD_PROMPT, RESTRICTED
from core.errors import ProviderError
from core.messages import InboundMessage, Message
from core.search.engine import search_messages
from functions.ingress import receive
from iris_testing.scripted_model import call, tool_calls

pytestmark = pytest.mark.process  # its tools run shells or processes


def send(rt, text, pmid="1"):
    message = InboundMessage(platform="http", chat_id="alice", account="http:alice",
                             platform_message_id=pmid, text=text)

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def is_child(messages):
    return messages[0].content == CHILD_PROMPT


def task_of(messages):
    return re.search(r"Your task: (.*)", messages[1].content)[1]


def child_script(log, fail_task=None):
    """One answer per model call, chosen by who is asking: children count words of a file."""

    def respond(messages):
        if not is_child(messages):
            if messages[-1].role == "tool":
                return "Both counted."
            return tool_calls(call(
                "delegate_task", goal="Count the words of the files",
                context="The files are in docs/.", tasks=["count docs/a.txt", "count docs/b.txt"],
            ))
        task = task_of(messages)
        log.append((task, len(messages)))
        if task.endswith(fail_task or "-"):
            return ProviderError("unavailable", "model overloaded", retryable=True)
        if messages[-1].role == "tool":
            words = re.search(r"stdout:\n\s*(\d+)", messages[-1].content)[1]
            return f"{task.split('/')[-1]} has {words} words"
        return tool_calls(call("terminal", command=f"wc -w < {task.split()[-1]}"))

    return respond


def setup_files(runtime, scripted):
    scripted.then("ok")
    user = send(runtime, "hi", "0").user_id
    workspace = runtime.settings.home / "workspaces" / user / "docs"
    workspace.mkdir(parents=True)
    (workspace / "a.txt").write_text("one two three")
    (workspace / "b.txt").write_text("four five")
    return user


def test_children_work_in_parallel_and_report_back(runtime, scripted):
    user = setup_files(runtime, scripted)
    log = []
    scripted.then(*[child_script(log)] * 6)
    entry = send(runtime, "count the words in my docs")
    assert entry.reply == "Both counted."

    result = scripted.requests[-1][-1]
    assert result.role == "tool" and result.name == "delegate_task"
    assert "2 subagent(s) finished: 2 done." in result.content
    assert "## Task 1: count docs/a.txt" in result.content and "a.txt has 3 words" in result.content
    assert "## Task 2: count docs/b.txt" in result.content and "b.txt has 2 words" in result.content
    assert result.content.startswith('<untrusted source="delegate_task">')

    first_turns = [i for i, (_, size) in enumerate(log) if size == 2]
    second_turns = [i for i, (_, size) in enumerate(log) if size > 2]
    assert max(first_turns) < min(second_turns)  # both started before either went on

    child_tools = [tools for msgs, tools in zip(scripted.requests, scripted.tools_seen,
                                                strict=True) if is_child(msgs)]
    assert all("terminal" in tools and not set(RESTRICTED) & set(tools) for tools in child_tools)
    parent_tools = scripted.tools_seen[1]
    assert "load_tools" in parent_tools and "delegate_task" not in parent_tools  # catalogue
    assert "delegate_task" in scripted.tools_seen[-1]  # loaded by calling it

    children = [s for s in runtime.store.sessions.list(user) if s.platform == "subagent"]
    assert len(children) == 2
    for session in children:
        assert session.chat_key.startswith(f"subagent:{entry.session_id}:")
        assert session.end_reason == "subagent done" and session.system_prompt == CHILD_PROMPT
        stored = runtime.store.messages.for_session(user, session.id)
        assert [m.message.role for m in stored] == ["user", "assistant", "tool", "assistant"]
        assert "Context from the delegating agent:\nThe files are in docs/." in (
            stored[0].message.content)
        assert runtime.store.usage.totals(user, session_id=session.id).calls == 2

    hits = search_messages(runtime.store, user, "b.txt has 2 words")
    assert hits and hits[0].session_id in {s.id for s in children}
    stranger = runtime.store.users.for_account("http:mallory")
    assert search_messages(runtime.store, stranger, "b.txt has 2 words") == []


def test_a_failing_child_does_not_sink_the_others(runtime, scripted):
    user = setup_files(runtime, scripted)
    scripted.then(*[child_script([], fail_task="b.txt")] * 5)
    entry = send(runtime, "count the words in my docs")
    assert entry.status == "done" and entry.reply == "Both counted."
    result = scripted.requests[-1][-1].content
    assert "2 subagent(s) finished: 1 done." in result
    assert "a.txt has 3 words" in result
    assert "[failed, 0 tool calls" in result and "model overloaded" in result
    failed = [s for s in runtime.store.sessions.list(user) if s.end_reason == "subagent failed"]
    assert len(failed) == 1
    assert [m.message.role for m in runtime.store.messages.for_session(user, failed[0].id)] == [
        "user"]


def test_children_stop_at_their_step_cap(runtime, scripted):
    runtime.settings = runtime.settings.model_copy(update={"subagent_max_iterations": 2})
    scripted.then(
        tool_calls(call("delegate_task", goal="loop forever")),
        tool_calls(call("clock"), text="checking"),
        tool_calls(call("clock"), text="still checking"),
        "gave up",
    )
    send(runtime, "go")
    result = scripted.requests[-1][-1].content
    assert "[stopped, 2 tool calls" in result
    assert "still checking\n(stopped after 2 steps without a final answer)" in result


def test_too_many_tasks_are_refused(runtime, scripted):
    scripted.then(
        tool_calls(call("delegate_task", goal="g", tasks=["a", "b", "c", "d"])), "ok",
    )
    send(runtime, "go")
    result = scripted.requests[-1][-1].content
    assert result.startswith("Error: invalid arguments for delegate_task: tasks:")
    assert len(scripted.requests) == 2


def test_children_cannot_run_dangerous_commands(runtime, scripted):
    user = setup_files(runtime, scripted)
    scripted.then(
        tool_calls(call("delegate_task", goal="clean up")),
        tool_calls(call("terminal", command="history -c")),
        lambda messages: Message(role="assistant", content=messages[-1].content),
        "done",
    )
    send(runtime, "go")
    result = scripted.requests[-1][-1].content
    assert "refused: this command covers its tracks" in result
    assert runtime.store.db.scalar(
        "SELECT count(*) FROM pending_approvals WHERE user_id = ?", (user,)) == 0


def test_a_child_runs_a_script_whose_tool_calls_keep_its_limits(runtime, scripted):
    user = setup_files(runtime, scripted)
    script = ('from iris_tools import terminal, write_file, ToolError\n'
              'write_file("docs/c.txt", "from the child")\n'
              'try:\n    terminal("history" + " -c")\nexcept ToolError as e:\n'
              '    print("terminal:", e)\n')
    scripted.then(
        tool_calls(call("delegate_task", goal="write c")),
        tool_calls(call("execute_code", code=script)),
        lambda messages: Message(role="assistant", content=messages[-1].content),
        "done",
    )
    send(runtime, "go")
    result = scripted.requests[-1][-1].content
    assert "terminal: refused: this command covers its tracks" in result
    workspace = runtime.settings.home / "workspaces" / user
    assert (workspace / "docs" / "c.txt").read_text() == "from the child"
    assert runtime.store.db.scalar(
        "SELECT count(*) FROM pending_approvals WHERE user_id = ?", (user,)) == 0
