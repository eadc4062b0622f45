from __future__ import annotations

import pytest

from core.config.mcp import McpServerConfig, parse_mcp_servers


def test_parses_stdio_and_http_servers():
    servers = parse_mcp_servers(
        {
            "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
            "docs-2": {"url": "https://mcp.example.com/mcp", "headers": {"X-Key": "k"}},
        }
    )
    assert servers["time"].transport == "stdio"
    assert servers["time"].args == ["--local-timezone", "UTC"]
    assert servers["time"].call_timeout == 60.0
    assert servers["docs-2"].transport == "http"
    assert servers["docs-2"].headers == {"X-Key": "k"}
    assert servers["docs-2"].enabled is True


@pytest.mark.parametrize("raw", [None, {}])
def test_nothing_configured(raw):
    assert parse_mcp_servers(raw) == {}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["time"], "mcp_servers: expected a mapping"),
        ({"my server": {"command": "x"}}, "server name 'my server'"),
        ({"a.b": {"command": "x"}}, "server name 'a.b'"),
        ({"time": "mcp-server-time"}, "mcp_servers.time: expected a mapping"),
        ({"time": {}}, "mcp_servers.time: set 'command'"),
        ({"both": {"command": "x", "url": "http://h/mcp"}}, "mcp_servers.both: set either"),
        ({"web": {"url": "ftp://h/mcp"}}, "mcp_servers.web.url: must start with http://"),
        ({"web": {"url": "http://h/mcp", "args": ["-v"]}}, "mcp_servers.web: 'args', 'env'"),
        ({"cmd": {"command": "x", "headers": {"a": "b"}}}, "mcp_servers.cmd: 'headers' apply"),
        ({"cmd": {"command": "  "}}, "mcp_servers.cmd.command: must not be empty"),
        ({"cmd": {"command": "x", "call_timeout": 0}}, "mcp_servers.cmd.call_timeout: Input"),
        ({"cmd": {"command": "x", "connect_timeout": "soon"}}, "mcp_servers.cmd.connect_timeout"),
        ({"cmd": {"command": "x", "args": "-v"}}, "mcp_servers.cmd.args"),
        ({"cmd": {"command": "x", "env": {"A": 1}}}, "mcp_servers.cmd.env.A"),
        ({"cmd": {"command": "x", "timeout": 5}}, "mcp_servers.cmd.timeout: unknown setting"),
    ],
)
def test_errors_name_the_server_and_field(raw, expected):
    with pytest.raises(ValueError) as caught:
        parse_mcp_servers(raw)
    assert expected in str(caught.value)


def test_model_validator_message_on_the_model_itself():
    with pytest.raises(ValueError, match="neither is set"):
        McpServerConfig()


def test_config_module_does_not_import_mcp():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    code = "import sys, core.mcp, core.config.mcp, core.mcp.client; print('mcp' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
