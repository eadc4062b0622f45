"""MCP servers' tools in a turn: a ``ToolProvider`` that connects to the servers of iris.yaml
for the length of the turn and offers each server tool as ``mcp__<server>__<tool>``.

Nothing is started when no server is configured. A server that cannot be reached shows up as
one tool, ``mcp__<server>__unavailable``, whose description and result say why, so the model
can tell the user instead of guessing; the rest of the turn goes on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from core.llm import ToolSpec
from core.tools.base import Tool, ToolContext

if TYPE_CHECKING:
    from core.config import Settings
    from core.mcp.client import McpConnections, McpTool
    from core.mcp.config import McpServerConfig

log = logging.getLogger("iris.mcp")

DESCRIPTION_CHARS = 1_024


class AnyArguments(BaseModel):
    model_config = ConfigDict(extra="allow")


class NoArguments(BaseModel):
    pass


def configured_servers(settings: Settings) -> dict[str, McpServerConfig]:
    from core.mcp.config import parse_mcp_servers

    return parse_mcp_servers(settings.mcp_servers)


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


class McpServerTool(Tool):
    """One tool of a connected MCP server; its output is the server's, so untrusted."""

    discoverable = False
    untrusted_output = True
    Args = AnyArguments
    description = "A tool of an MCP server."
    name = "mcp"

    def __init__(self, connections: McpConnections, tool: McpTool):
        self._connections = connections
        self._tool = tool
        self.name = tool.qualified_name  # type: ignore[misc]
        text = tool.description.strip() or f"The tool {tool.name!r}."
        self.description = f"[MCP server {tool.server}] {text}"[:DESCRIPTION_CHARS]  # type: ignore[misc]

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name, description=self.description,
            parameters=_object_schema(self._tool.input_schema),
        )

    async def run(self, ctx: ToolContext, args: AnyArguments) -> str:
        result = await self._connections.call(self.name, args.model_dump())
        if result.is_error:
            return f"Error from MCP tool {self._tool.name!r}: {result.text}"
        return result.text


class McpServerDown(Tool):
    """Stands in for the tools of a server that could not be reached this turn."""

    discoverable = False
    Args = NoArguments
    description = "An MCP server that is down."
    name = "mcp_unavailable"

    def __init__(self, qualified: str, reason: str):
        self.name = qualified  # type: ignore[misc]
        self.reason = reason
        self.description = (  # type: ignore[misc]
            f"{reason}. Its tools are missing for now; calling this returns the error. Tell "
            "the user if they need that server."
        )[:DESCRIPTION_CHARS]

    async def run(self, ctx: ToolContext, args: NoArguments) -> str:
        return f"Error: {self.reason}"


def _down_tools(failures: dict[str, str], taken: set[str]) -> list[Tool]:
    from core.mcp.client import qualified_name

    tools: list[Tool] = []
    for server, reason in failures.items():
        name = qualified_name(server, "unavailable", taken)
        taken.add(name)
        tools.append(McpServerDown(name, reason))
    return tools


@asynccontextmanager
async def mcp_tools(ctx: ToolContext) -> AsyncIterator[list[Tool]]:
    """A ``ToolProvider``: the tools of the enabled MCP servers, open for one turn."""
    servers = {
        name: config for name, config in configured_servers(ctx.settings).items()
        if config.enabled
    }
    if not servers:
        yield []
        return
    from core.mcp.client import McpConnections

    async with AsyncExitStack() as stack:
        try:
            connections = await stack.enter_async_context(McpConnections(servers))
        except Exception as exc:
            log.exception("could not open the MCP connections")
            failures = {name: f"MCP server {name!r} could not connect: {exc}" for name in servers}
            tools: list[Tool] = _down_tools(failures, set())
        else:
            tools = [McpServerTool(connections, tool) for tool in connections.tools()]
            tools += _down_tools(connections.failures(), {tool.name for tool in tools})
        yield tools
