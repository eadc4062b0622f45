"""End to end over real HTTP: the openai client → the emulator (uvicorn) → litellm → a scripted
model server that drives the workspace tools, MCP and held commands."""

import json
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from iris_testing.llm_server import ScriptedLLM
from tests.fakes.stack import emulator_stack

BIN = Path(sys.executable).parent


@pytest.fixture
def llm():
    return ScriptedLLM()


@contextmanager
def running_iris(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch) as running:
        yield running.client, running.runtime


@pytest.fixture
def stack(llm, monkeypatch):
    with running_iris(llm, monkeypatch) as running:
        yield running


def ask(client, text, user="alice"):
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=user
    )
    return answer.choices[0].message.content


def last_tool_result(llm):
    message = llm.requests[-1]["messages"][-1]
    assert message["role"] == "tool"
    return message["content"]


def test_write_run_read_then_find_it_again_and_not_as_another_user(stack, llm):
    client, rt = stack
    poem = "roses are red\nviolets are blue\n"
    (
        llm.tool_call("write_file", {"path": "poems/poem.txt", "content": poem})
        .tool_call("terminal", {"command": "wc -l < poem.txt > count.txt", "workdir": "poems"})
        .tool_call("read_file", {"path": "poems/count.txt"})
        .reply("Your poem has 2 lines.")
    )
    assert ask(client, "Save my poem and count its lines.") == "Your poem has 2 lines."
    results = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0] == "Created poems/poem.txt (31 bytes)."
    assert "exit code 0" in results[1]
    assert "     1\t2" in results[2] and results[2].startswith("<untrusted")

    alice = rt.store.users.resolve("http:alice")
    first_session = rt.store.sessions.list(alice)[0].id
    assert ask(client, "/new") == "Started a new session."
    llm.tool_call("read_file", {"path": "poems/poem.txt"}).reply("Found it.")
    assert ask(client, "Read my poem back.") == "Found it."
    assert "1\troses are red\n" in last_tool_result(llm)
    assert not any("Save my poem" in str(m["content"]) for m in llm.requests[-1]["messages"])
    sessions = rt.store.sessions.list(alice)
    assert len(sessions) == 2 and sessions[0].id != first_session

    llm.tool_call("read_file", {"path": "poems/poem.txt"}).reply("No poem here.")
    assert ask(client, "Read my poem back.", user="bob") == "No poem here."
    assert "no such file in the workspace: 'poems/poem.txt'" in last_tool_result(llm)
    llm.tool_call("search_files", {"pattern": "roses"}).reply("Nothing.")
    assert ask(client, "Find roses.", user="bob") == "Nothing."
    assert "No matches for pattern 'roses'" in last_tool_result(llm)
    workspaces = rt.settings.home / "workspaces"
    bob = rt.store.users.resolve("http:bob")
    assert (workspaces / alice / "poems" / "poem.txt").read_text() == poem
    assert not (workspaces / bob / "poems").exists()


def test_a_held_command_runs_after_approve(stack, llm):
    client, rt = stack
    rt.settings = rt.settings.model_copy(update={"dangerous_command_patterns": [r"\bshred\b"]})
    llm.tool_call("write_file", {"path": "old.key", "content": "secret"}).tool_call(
        "terminal", {"command": "shred -u old.key && echo shredded"}
    ).reply("That needs your approval: send /approve 1.")
    assert ask(client, "Make old.key, then destroy it.") == (
        "That needs your approval: send /approve 1."
    )
    assert "held as #1" in last_tool_result(llm)
    key = rt.settings.home / "workspaces" / rt.store.users.resolve("http:alice") / "old.key"
    assert key.read_text() == "secret"

    llm.reply("Done: old.key is gone.")
    assert ask(client, "/approve 1") == "Done: old.key is gone."
    assert not key.exists()
    prompt = llm.requests[-1]["messages"][-1]["content"]
    assert "approved held command #1 (`shred -u old.key && echo shredded`)" in prompt
    assert "shredded" in prompt and prompt.endswith("/approve 1")
    assert ask(client, "/approve 1") == "Held command #1 was already done."


def test_mcp_tools_in_a_turn(llm, monkeypatch):
    server = (
        {"command": str(BIN / "mcp-server-time")} if (BIN / "mcp-server-time").exists()
        else {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    )
    monkeypatch.setenv("IRIS_MCP_SERVERS", json.dumps({
        "time": server, "down": {"command": "iris-no-such-server", "connect_timeout": 2},
    }))
    with running_iris(llm, monkeypatch) as (client, _):
        llm.tool_call("mcp__time__get_current_time", {"timezone": "Europe/Paris"}).reply("Noon.")
        assert ask(client, "Time in Paris?") == "Noon."
    first = {t["function"]["name"]: t["function"] for t in llm.requests[0]["tools"]}
    assert "terminal" in first and "mcp__time__get_current_time" not in first
    catalogue = first["load_tools"]["description"]  # MCP tools are offered in the catalogue
    assert "mcp:time (2 tools: get_current_time, convert_time)" in catalogue
    assert "mcp:down (1 tool: unavailable)" in catalogue
    loaded = {t["function"]["name"] for t in llm.requests[-1]["tools"]}
    assert "mcp__time__get_current_time" in loaded  # calling it loaded it
    assert '"timezone": "Europe/Paris"' in last_tool_result(llm)
