import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from local_dev.cli import cli

pytestmark = pytest.mark.process  # its tools run shells or processes

BIN = Path(sys.executable).parent
TIME_SERVER = (
    {"command": str(BIN / "mcp-server-time")}
    if (BIN / "mcp-server-time").exists()
    else {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
)


def configure(monkeypatch, servers):
    monkeypatch.setenv("IRIS_MCP_SERVERS", json.dumps(servers))


def test_list_without_servers():
    result = CliRunner().invoke(cli, ["mcp", "list"])
    assert result.exit_code == 0
    assert "No MCP servers configured" in result.output


def test_list_shows_servers_without_secrets(monkeypatch):
    configure(monkeypatch, {
        "time": TIME_SERVER,
        "docs": {"url": "https://mcp.example.com/mcp",
                 "headers": {"Authorization": "Bearer sk-hidden-999"}, "enabled": False},
    })
    result = CliRunner().invoke(cli, ["mcp", "list"])
    assert result.exit_code == 0
    assert "time  stdio  " in result.output
    assert "docs  http  https://mcp.example.com/mcp  (disabled)" in result.output
    assert "sk-hidden" not in result.output
    listed = json.loads(CliRunner().invoke(cli, ["mcp", "list", "--json"]).output)
    assert listed[1] == {
        "name": "docs", "transport": "http", "enabled": False, "connect_timeout": 10.0,
        "call_timeout": 60.0, "url": "https://mcp.example.com/mcp", "headers": ["Authorization"],
    }


def test_test_connects_and_lists_tools(monkeypatch):
    configure(monkeypatch, {"time": TIME_SERVER})
    result = CliRunner().invoke(cli, ["mcp", "test", "time"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("time: connected, 2 tool(s)\n")
    assert "  mcp__time__get_current_time(timezone)\n" in result.output
    data = json.loads(CliRunner().invoke(cli, ["mcp", "test", "time", "--json"]).output)
    assert data["ok"] is True
    tool = next(t for t in data["tools"] if t["tool"] == "convert_time")
    assert tool["name"] == "mcp__time__convert_time"
    assert set(tool["input_schema"]["properties"]) == {"source_timezone", "time",
                                                       "target_timezone"}


def test_unknown_and_unreachable_servers_exit_1(monkeypatch):
    configure(monkeypatch, {"gone": {"command": "iris-no-such-mcp-server"}})
    unknown = CliRunner().invoke(cli, ["mcp", "test", "nope"])
    assert unknown.exit_code == 1
    assert "no MCP server named 'nope' (known: gone)" in unknown.output
    down = CliRunner().invoke(cli, ["mcp", "test", "gone"])
    assert down.exit_code == 1
    assert "error: MCP server 'gone' could not connect: not found: 'iris-no-such-mcp-server'" in (
        down.output)


def test_bad_config_is_one_line(monkeypatch):
    configure(monkeypatch, {"t": {"command": "x", "call_timeout": -1}})
    result = CliRunner().invoke(cli, ["mcp", "list"])
    assert result.exit_code == 2
    assert result.output == (
        "config error: IRIS_MCP_SERVERS: mcp_servers.t.call_timeout: "
        "Input should be greater than 0\n"
    )
