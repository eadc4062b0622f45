from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ImageContent

from core.config.mcp import McpServerConfig
from core.mcp.client import McpConnections, McpError, list_server_tools
from iris_testing.server import free_port, serve
from iris_testing.waiting import until


class CheckToken:
    """ASGI wrapper that remembers request headers and answers 401 to a wrong bearer token."""

    def __init__(self, app: Any):
        self.app = app
        self.seen: list[dict[str, str]] = []
        self.naps: list[float] = []  # each nap the server has begun: a call is in flight

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            self.seen.append(headers)
            if headers.get("authorization", "Bearer sesame") != "Bearer sesame":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"bad token"})
                return
        await self.app(scope, receive, send)


def build_app() -> CheckToken:
    server = MCPServer("iris-test-http")
    naps: list[float] = []

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def explode(reason: str) -> str:
        """Always fails, saying why."""
        raise ToolError(f"exploded: {reason}")

    @server.tool()
    def crash() -> str:
        """Fails with an unexpected exception."""
        raise RuntimeError("internal detail")

    @server.tool()
    async def nap(seconds: float) -> str:
        """Sleep, then answer."""
        naps.append(seconds)
        await anyio.sleep(seconds)
        return "rested"

    @server.tool()
    def chart() -> CallToolResult:
        """Structured data with a picture and no text."""
        return CallToolResult(
            content=[ImageContent(data="aGVsbG8gd29ybGQh", mime_type="image/png")],
            structured_content={"rows": 2, "label": "Grüße"},
        )

    app = CheckToken(server.streamable_http_app())
    app.naps = naps
    return app


@pytest.fixture(scope="module")
def http_server():
    app = build_app()
    with serve(app) as running:
        yield running, app


def config_for(http_server, **settings: Any) -> McpServerConfig:
    running, _ = http_server
    return McpServerConfig(url=f"{running.url}/mcp", **settings)


def test_lists_and_calls_tools_with_configured_headers(run, http_server):
    config = config_for(http_server, headers={"Authorization": "Bearer sesame"})
    _, app = http_server
    app.seen.clear()

    async def turn():
        async with McpConnections({"calc": config}) as mcp:
            tools = {tool.qualified_name: tool for tool in mcp.tools()}
            added = await mcp.call("mcp__calc__add", {"a": 2, "b": 40})
            failed = await mcp.call("mcp__calc__explode", {"reason": "on purpose"})
            crashed = await mcp.call("mcp__calc__crash", {})
            wrong = await mcp.call("mcp__calc__add", {"a": "two"})
            unknown = await mcp.call("mcp__calc__subtract", {})
            chart = await mcp.call("mcp__calc__chart", {})
            return tools, added, failed, crashed, wrong, unknown, chart

    tools, added, failed, crashed, wrong, unknown, chart = run(turn())

    assert set(tools) == {
        "mcp__calc__add",
        "mcp__calc__explode",
        "mcp__calc__nap",
        "mcp__calc__chart",
        "mcp__calc__crash",
    }
    assert tools["mcp__calc__add"].description == "Add two integers."
    assert set(tools["mcp__calc__add"].input_schema["properties"]) == {"a", "b"}

    assert not added.is_error and added.text == "42"
    assert failed.is_error and failed.text.endswith("exploded: on purpose")
    assert crashed.is_error and crashed.text == "Error executing tool crash"
    assert wrong.is_error and "validation error" in wrong.text and "Field required" in wrong.text
    assert unknown.is_error and unknown.text == "Unknown MCP tool 'mcp__calc__subtract'."

    assert not chart.is_error
    first, second = chart.text.split("\n")
    assert json.loads(first) == {"rows": 2, "label": "Grüße"}
    assert second == "[image: image/png, 12 bytes]"

    assert app.seen and all(h.get("authorization") == "Bearer sesame" for h in app.seen)


def test_a_call_over_call_timeout_is_an_error_and_the_session_survives(run, http_server):
    # One call_timeout covers both calls: long enough that the follow-up answers on a loaded
    # machine, far shorter than the nap, so the nap's call returning at all means it was cut.
    config = config_for(http_server, call_timeout=2)

    async def turn():
        async with McpConnections({"calc": config}) as mcp:
            slow = await mcp.call("mcp__calc__nap", {"seconds": 60})
            after = await mcp.call("mcp__calc__add", {"a": 1, "b": 1})
            return slow, after

    slow, after = run(turn())

    assert slow.is_error
    assert slow.text == "MCP tool 'nap' on server 'calc' timed out after 2s"
    assert after == type(after)(text="2", is_error=False)


def test_concurrent_calls_share_the_session(run, http_server):
    config = config_for(http_server)

    async def turn():
        results = {}
        async with McpConnections({"calc": config}) as mcp:

            async def call(key: str, name: str, arguments: dict[str, Any]) -> None:
                results[key] = await mcp.call(name, arguments)

            async with anyio.create_task_group() as group:
                group.start_soon(call, "nap", "mcp__calc__nap", {"seconds": 0.2})
                for n in range(5):
                    group.start_soon(call, f"add{n}", "mcp__calc__add", {"a": n, "b": n})
        return results

    results = run(turn())

    assert results.pop("nap").text == "rested"
    assert {key: r.text for key, r in results.items()} == {f"add{n}": str(2 * n) for n in range(5)}


def test_server_down_is_reported_and_other_servers_work(run, http_server):
    servers = {
        "down": McpServerConfig(url=f"http://127.0.0.1:{free_port()}/mcp", connect_timeout=3),
        "calc": config_for(http_server),
    }

    async def turn():
        async with McpConnections(servers) as mcp:
            down = await mcp.call("mcp__down__add", {"a": 1, "b": 2})
            up = await mcp.call("mcp__calc__add", {"a": 1, "b": 2})
            return mcp.failures(), down, up

    failures, down, up = run(turn())

    assert list(failures) == ["down"]
    assert "MCP server 'down' could not connect: cannot reach http://127.0.0.1:" in failures["down"]
    assert down.is_error and down.text == failures["down"]
    assert up.text == "3"


def test_a_turn_cancelled_mid_call_closes_cleanly(run, http_server):
    config = config_for(http_server)
    _, app = http_server
    before = len(app.naps)

    async def turn():
        with anyio.CancelScope() as scope:
            async with McpConnections({"calc": config}) as mcp:

                async def cancel_once_the_nap_began() -> None:
                    await until(lambda: len(app.naps) > before, "the server to begin the nap")
                    scope.cancel()

                async with anyio.create_task_group() as group:
                    group.start_soon(cancel_once_the_nap_began)
                    await mcp.call("mcp__calc__nap", {"seconds": 60})
        return scope.cancelled_caught, mcp.tools(), await mcp.call("mcp__calc__add", {})

    cancelled, tools, late = run(turn())

    assert cancelled
    assert tools
    assert late.is_error and late.text == "MCP server 'calc' is not connected."


def test_list_server_tools_over_http(run, http_server):
    tools = run(list_server_tools("calc", config_for(http_server)))
    assert sorted(t.name for t in tools) == ["add", "chart", "crash", "explode", "nap"]

    with pytest.raises(McpError, match="'gone' could not connect"):
        run(list_server_tools("gone", McpServerConfig(url=f"http://127.0.0.1:{free_port()}/mcp")))


def test_a_refused_token_is_named_in_the_failure(run, http_server):
    config = config_for(http_server, headers={"Authorization": "Bearer wrong"})

    async def turn():
        async with McpConnections({"calc": config}) as mcp:
            return mcp.failures(), mcp.tools()

    failures, tools = run(turn())

    assert tools == []
    assert failures["calc"] == (
        f"MCP server 'calc' could not connect: {config.url} answered HTTP 401 Unauthorized "
        "(check its 'headers' setting)"
    )
