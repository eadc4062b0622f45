"""``iris mcp``: the MCP servers of iris.yaml."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import click

from local_dev.clikit import settings_or_exit


@click.group("mcp")
def mcp_group() -> None:
    """MCP servers whose tools Iris offers the model (mcp_servers: in iris.yaml).

    \b
    Example iris.yaml:
      mcp_servers:
        time:
          command: mcp-server-time
          args: ["--local-timezone", "Europe/Berlin"]
        docs:
          url: https://mcp.example.com/mcp
          headers: {Authorization: "Bearer ..."}
    """


def _describe(name: str, config: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "transport": config.transport,
        "enabled": config.enabled,
        "connect_timeout": config.connect_timeout,
        "call_timeout": config.call_timeout,
    }
    if config.command:
        out["command"] = " ".join([config.command, *config.args])
        out["env"] = sorted(config.env)
    else:
        out["url"] = config.url
        out["headers"] = sorted(config.headers)
    return out


@mcp_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def mcp_list(as_json: bool) -> None:
    """List the configured MCP servers (secrets not shown).

    Example: iris mcp list
    """
    from core.acting.mcp_tools import configured_servers

    servers = [_describe(n, c) for n, c in configured_servers(settings_or_exit()).items()]
    if as_json:
        click.echo(json.dumps(servers, indent=2))
        return
    if not servers:
        click.echo("No MCP servers configured (add mcp_servers: to iris.yaml).")
        return
    for server in servers:
        target = server.get("command") or server.get("url")
        state = "" if server["enabled"] else "  (disabled)"
        click.echo(f"{server['name']}  {server['transport']}  {target}{state}")


@mcp_group.command("test")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def mcp_test(name: str, as_json: bool) -> None:
    """Connect to server NAME and list its tools as the model sees them.

    Exits 1 when the server cannot be reached. Works for disabled servers too.

    Example: iris mcp test time
    """
    from core.acting.mcp_tools import configured_servers
    from core.mcp.client import McpError, list_server_tools

    servers = configured_servers(settings_or_exit())
    config = servers.get(name)
    if config is None:
        known = ", ".join(sorted(servers)) or "none configured"
        click.echo(f"error: no MCP server named {name!r} (known: {known})", err=True)
        sys.exit(1)
    try:
        tools = asyncio.run(list_server_tools(name, config))
    except McpError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if as_json:
        listed = [
            {"name": t.qualified_name, "tool": t.name, "description": t.description,
             "input_schema": t.input_schema}
            for t in tools
        ]
        click.echo(json.dumps({"server": name, "ok": True, "tools": listed}, indent=2))
        return
    click.echo(f"{name}: connected, {len(tools)} tool(s)")
    for tool in tools:
        params = ", ".join(tool.input_schema.get("properties", {})) or "no arguments"
        summary = (tool.description.strip().splitlines() or [""])[0]
        click.echo(f"  {tool.qualified_name}({params})")
        if summary:
            click.echo(f"      {summary[:100]}")


commands = [mcp_group]
