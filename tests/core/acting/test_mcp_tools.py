import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer

from core.acting.mcp_tools import mcp_tools
from core.config import load_settings
from core.contracts.toolkit import Toolset
from core.errors import ConfigError
from core.messages import ToolCall
from iris_testing.server import serve
from tests.core.acting.support import make_ctx

pytestmark = pytest.mark.process  # its tools run shells or processes

BIN = Path(sys.executable).parent
TIME_SERVER = (
    {"command": str(BIN / "mcp-server-time")}
    if (BIN / "mcp-server-time").exists()
    else {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
)


def settings_with(monkeypatch, servers):
    monkeypatch.setenv("IRIS_MCP_SERVERS", json.dumps(servers))
    return load_settings()


async def use_tools(ctx, calls):
    """Open the provider like a turn does, call tools through a Toolset, close it."""
    async with mcp_tools(ctx) as tools:
        toolset = Toolset(tools)
        specs = {spec.name: spec for spec in toolset.specs()}
        results = []
        for name, arguments in calls:
            call = ToolCall(id=f"c{len(results)}", name=name, arguments=json.dumps(arguments))
            results.append((await toolset.call(ctx, call)).content)
        return specs, results


def test_no_servers_no_tools(store, settings):
    async def go():
        async with mcp_tools(make_ctx(store, settings)) as tools:
            return tools

    assert asyncio.run(go()) == []


def test_time_server_over_stdio(store, monkeypatch):
    settings = settings_with(monkeypatch, {"time": TIME_SERVER})
    ctx = make_ctx(store, settings)
    specs, (ok, bad) = asyncio.run(use_tools(ctx, [
        ("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}),
        ("mcp__time__get_current_time", {"timezone": "Mars/Olympus"}),
    ]))
    assert set(specs) == {"mcp__time__get_current_time", "mcp__time__convert_time"}
    spec = specs["mcp__time__get_current_time"]
    assert spec.description.startswith("[MCP server time] ")
    assert spec.parameters["type"] == "object" and "timezone" in spec.parameters["properties"]
    assert ok.startswith('<untrusted source="mcp__time__get_current_time">')
    assert '"timezone": "Asia/Tokyo"' in ok
    assert "Error from MCP tool 'get_current_time'" in bad and "Mars/Olympus" in bad
    assert bad.startswith("<untrusted")


def test_a_server_that_is_down_is_reported_not_fatal(store, monkeypatch):
    settings = settings_with(monkeypatch, {
        "broken": {"command": "iris-no-such-mcp-server"},
        "off": {"command": "iris-never-started", "enabled": False},
        "time": TIME_SERVER,
    })
    ctx = make_ctx(store, settings)
    specs, (down,) = asyncio.run(use_tools(ctx, [("mcp__broken__unavailable", {})]))
    assert "mcp__time__get_current_time" in specs
    assert not any(name.startswith("mcp__off") for name in specs)
    description = specs["mcp__broken__unavailable"].description
    assert "MCP server 'broken' could not connect: not found: 'iris-no-such-mcp-server'" in (
        description)
    assert down == (
        "Error: MCP server 'broken' could not connect: not found: 'iris-no-such-mcp-server'"
    )


def http_app():
    server = MCPServer("iris-acting-test")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server.streamable_http_app()


def test_streamable_http_server(store, monkeypatch):
    with serve(http_app()) as running:
        settings = settings_with(monkeypatch, {"calc": {"url": f"{running.url}/mcp"}})
        ctx = make_ctx(store, settings)
        specs, (total, wrong) = asyncio.run(use_tools(ctx, [
            ("mcp__calc__add", {"a": 2, "b": 40}),
            ("mcp__calc__add", {"a": "two"}),
        ]))
    assert specs["mcp__calc__add"].parameters["required"] == ["a", "b"]
    assert "\n42\n" in total
    assert "Error from MCP tool 'add'" in wrong


@pytest.mark.parametrize(
    ("servers", "fragment"),
    [
        ({"t": {"command": "x", "url": "http://h/mcp"}}, "either 'command'"),
        ({"t": {"url": "ftp://h"}}, "mcp_servers.t.url: must start with http://"),
        ({"bad name": {"command": "x"}}, "may only use letters"),
        ({"t": {"command": "x", "tiemout": 3}}, "mcp_servers.t.tiemout: unknown setting"),
    ],
)
def test_bad_server_settings_fail_at_load(monkeypatch, servers, fragment):
    monkeypatch.setenv("IRIS_MCP_SERVERS", json.dumps(servers))
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.setting == "IRIS_MCP_SERVERS"
    assert fragment in str(caught.value)


def test_yaml_servers_are_validated_and_secrets_masked(iris_home):
    (iris_home / "iris.yaml").write_text(
        "mcp_servers:\n"
        "  docs:\n    url: https://mcp.example.com/mcp\n"
        "    headers: {Authorization: Bearer sk-live-123456}\n"
        "  gh:\n    command: gh-mcp\n    env: {GITHUB_TOKEN: ghp_abcdef123456}\n"
    )
    settings = load_settings()
    shown = json.dumps(settings.masked())
    assert "sk-live-123456" not in shown and "ghp_abcdef123456" not in shown
    masked = settings.masked()["mcp_servers"]
    assert masked["docs"]["headers"] == {"Authorization": "*** (set)"}
    assert masked["gh"] == {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "*** (set)"}}
    assert settings.mcp_servers["gh"]["env"]["GITHUB_TOKEN"] == "ghp_abcdef123456"


def test_warm_turns_start_a_server_only_when_its_tool_is_called(store, monkeypatch, tmp_path):
    starts = tmp_path / "starts.log"
    server = {"command": sys.executable, "args": [str(Path(__file__).with_name(
        "counting_server.py"))], "env": {"START_LOG": str(starts)}}
    settings = settings_with(monkeypatch, {"loud": server})
    ctx = make_ctx(store, settings)

    def started():
        return starts.read_text().count("start") if starts.exists() else 0

    specs, _ = asyncio.run(use_tools(ctx, []))
    assert "mcp__loud__shout" in specs and started() == 1
    specs, _ = asyncio.run(use_tools(ctx, []))
    assert "mcp__loud__shout" in specs and started() == 1
    specs, (one, two) = asyncio.run(use_tools(ctx, [
        ("mcp__loud__shout", {"text": "hi"}), ("mcp__loud__shout", {"text": "yo"}),
    ]))
    assert "\nHI\n" in one and "\nYO\n" in two and started() == 2

    missing = dict(server, env={"START_LOG": str(tmp_path / "no-such-dir" / "x.log")})
    later = settings_with(monkeypatch, {"loud": missing})
    specs, (down,) = asyncio.run(use_tools(make_ctx(store, later, "http:bob"), [
        ("mcp__loud__unavailable", {}),
    ]))
    assert "mcp__loud__shout" not in specs
    assert down.startswith("Error: MCP server 'loud' could not connect")


def test_a_remembered_server_that_went_down_is_an_error_result(store, monkeypatch, tmp_path):
    log = tmp_path / "starts.log"
    script = tmp_path / "flaky_server.py"
    script.write_text(Path(__file__).with_name("counting_server.py").read_text())
    server = {"command": sys.executable, "args": [str(script)], "env": {"START_LOG": str(log)}}
    ctx = make_ctx(store, settings_with(monkeypatch, {"flaky": server}))
    asyncio.run(use_tools(ctx, []))
    script.write_text("import sys\nsys.exit(3)\n")
    specs, (result,) = asyncio.run(use_tools(ctx, [("mcp__flaky__shout", {"text": "x"})]))
    assert "mcp__flaky__shout" in specs
    assert "Error from MCP tool 'shout'" in result and "could not connect" in result
