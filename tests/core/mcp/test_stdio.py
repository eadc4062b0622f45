from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from core.config.mcp import McpServerConfig
from core.mcp.client import McpConnections, McpError, child_environment, list_server_tools
from iris_testing.waiting import until

BIN = Path(sys.executable).parent
TIME_SERVER = (
    McpServerConfig(command=str(BIN / "mcp-server-time"))
    if (BIN / "mcp-server-time").exists()
    else McpServerConfig(command=sys.executable, args=["-m", "mcp_server_time"])
)
TEST_SERVER = str(Path(__file__).with_name("stdio_server.py"))
SILENT_SERVER = McpServerConfig(
    command=sys.executable, args=["-c", "import sys; sys.stdin.read()"], connect_timeout=0.5
)


def child_now() -> datetime:
    seen = subprocess.run([sys.executable, "-c", "import time; print(time.time())"],
                          env=child_environment({}), capture_output=True, text=True, check=True)
    return datetime.fromtimestamp(float(seen.stdout), UTC)


def test_time_server_beside_a_missing_command(run):
    servers = {"broken": McpServerConfig(command="iris-no-such-mcp-server"), "time": TIME_SERVER}

    async def turn():
        async with McpConnections(servers) as mcp:
            tools = {tool.qualified_name: tool for tool in mcp.tools()}
            ok = await mcp.call("mcp__time__get_current_time", {"timezone": "Europe/Berlin"})
            bad = await mcp.call("mcp__time__get_current_time", {"timezone": "Mars/Olympus"})
            down = await mcp.call("mcp__broken__anything", {})
            return mcp.failures(), tools, ok, bad, down

    failures, tools, ok, bad, down = run(turn())

    assert list(failures) == ["broken"]
    assert failures["broken"] == (
        "MCP server 'broken' could not connect: not found: 'iris-no-such-mcp-server'"
    )
    assert down.is_error and down.text == failures["broken"]

    assert set(tools) == {"mcp__time__get_current_time", "mcp__time__convert_time"}
    tool = tools["mcp__time__get_current_time"]
    assert (tool.server, tool.name) == ("time", "get_current_time")
    assert tool.description
    assert tool.input_schema["type"] == "object"
    assert "timezone" in tool.input_schema["properties"]

    assert not ok.is_error
    answer = json.loads(ok.text)
    assert answer["timezone"] == "Europe/Berlin"
    moment = datetime.fromisoformat(answer["datetime"])
    assert moment.utcoffset() in (timedelta(hours=1), timedelta(hours=2))
    # the server's clock is the one a child with its scrubbed environment sees (under
    # faketime the test process is moved, the server is not)
    assert abs(moment - child_now()) < timedelta(minutes=5)

    assert bad.is_error
    assert "Mars/Olympus" in bad.text


def test_minimal_environment_quiet_stderr_and_a_server_dying_mid_turn(run, monkeypatch, capfd):
    monkeypatch.setenv("IRIS_TEST_PARENT_SECRET", "do-not-leak")
    config = McpServerConfig(
        command=sys.executable, args=[TEST_SERVER], env={"IRIS_TEST_GIVEN": "given"}
    )

    async def turn():
        async with McpConnections({"probe": config}) as mcp:
            names = ("IRIS_TEST_PARENT_SECRET", "IRIS_TEST_GIVEN", "PATH")
            seen = [await mcp.call("mcp__probe__getenv", {"name": n}) for n in names]
            died = await mcp.call("mcp__probe__die", {})
            after = await mcp.call("mcp__probe__getenv", {"name": "PATH"})
            return seen, died, after

    (secret, given, path), died, after = run(turn())

    assert secret.text == "<unset>"
    assert given.text == "given"
    assert path.text not in ("", "<unset>")
    assert "stdio test server starting" not in capfd.readouterr().err

    assert died.is_error
    assert died.text == (
        "MCP server 'probe' closed the connection; the call to 'die' did not complete"
    )
    assert after.is_error and "'probe'" in after.text


def test_a_server_that_exits_at_start_reports_its_stderr(run):
    config = McpServerConfig(
        command=sys.executable, args=[TEST_SERVER], env={"FAIL_AT_START": "no API key set"}
    )

    async def turn():
        async with McpConnections({"flaky": config}) as mcp:
            return mcp.failures(), mcp.tools()

    failures, tools = run(turn())

    assert tools == []
    assert failures["flaky"].startswith("MCP server 'flaky' could not connect: ")
    assert "fatal: no API key set" in failures["flaky"]


def test_a_silent_server_is_given_up_after_connect_timeout(run):
    async def turn():
        async with McpConnections({"silent": SILENT_SERVER}) as mcp:
            return mcp.failures()

    assert run(turn()) == {
        "silent": "MCP server 'silent' could not connect: timed out after 0.5s"}


def test_each_server_is_given_up_at_its_own_connect_timeout(run):
    """Two silent servers started together: the one allowed half a second is given up while
    the one allowed an hour is still waited for (no clock read: the order is the proof; with
    one shared timeout, the default's or either one's, both would go at once)."""
    patient = SILENT_SERVER.model_copy(update={"connect_timeout": 3600.0})
    mcp = McpConnections({"patient": patient, "silent": SILENT_SERVER})

    async def turn():
        async with anyio.create_task_group() as group:
            group.start_soon(mcp.__aenter__)
            failures = await until(lambda: mcp.failures(), "the first server given up")
            group.cancel_scope.cancel()  # stops the hour's wait; cleanup is the next test's
        return failures

    failures = run(turn())
    assert failures == {"silent": "MCP server 'silent' could not connect: timed out after 0.5s"}


def test_a_turn_cancelled_while_connecting_cleans_up(run):
    slow = SILENT_SERVER.model_copy(update={"connect_timeout": 10.0})

    async def turn():
        with anyio.move_on_after(0.3) as scope:
            async with McpConnections({"slow": slow}):
                pytest.fail("the connection should not have opened")
        return scope.cancelled_caught

    assert run(turn()) is True


def test_disabled_servers_are_not_started(run):
    servers = {"off": McpServerConfig(command="iris-no-such-mcp-server", enabled=False)}

    async def turn():
        async with McpConnections(servers) as mcp:
            return mcp.failures(), mcp.tools()

    assert run(turn()) == ({}, [])


def test_list_server_tools_raises_for_a_server_that_cannot_start(run):
    config = McpServerConfig(command="iris-no-such-mcp-server", enabled=False)
    with pytest.raises(McpError, match="'nowhere' could not connect: not found"):
        run(list_server_tools("nowhere", config))
