"""MCP servers' tools in a turn: a ``ToolProvider`` that offers each tool of the servers of
iris.yaml as ``mcp__<server>__<tool>`` and closes every connection when the turn ends.

Nothing is started when no server is configured. The first turn in a process connects to the
servers to list their tools and remembers the lists (``TOOLS_TTL``); later turns offer the
remembered tools and connect only when the model calls one, so a turn that uses no MCP tool
costs nothing. A server that cannot be reached shows up as one tool,
``mcp__<server>__unavailable``, whose description and result say why, so the model can tell
the user instead of guessing; the rest of the turn goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from core.contracts.toolkit import Tool, ToolContext
from core.model.llm import ToolSpec

if TYPE_CHECKING:
    from core.config import Settings
    from core.config.mcp import McpServerConfig
    from core.mcp.client import McpConnections, McpTool

log = logging.getLogger("iris.mcp")

DESCRIPTION_CHARS = 1_024
TOOLS_TTL = 600.0

_remembered: dict[str, tuple[list[McpTool], float]] = {}


class AnyArguments(BaseModel):
    model_config = ConfigDict(extra="allow")


class NoArguments(BaseModel):
    pass


def configured_servers(settings: Settings) -> dict[str, McpServerConfig]:
    from core.config.mcp import parse_mcp_servers

    return parse_mcp_servers(settings.mcp_servers)


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


class McpServerTool(Tool):
    """One tool of a connected MCP server; its output is the server's, so untrusted."""

    discoverable = False
    deferred = True  # offered through the load_tools catalogue
    untrusted_output = True
    Args = AnyArguments
    description = "A tool of an MCP server."
    name = "mcp"

    def __init__(self, connections: Callable[[], Awaitable[McpConnections]], tool: McpTool):
        self._connections = connections
        self._tool = tool
        self.group = f"mcp:{tool.server}"  # loaded together from the catalogue
        self.name = tool.qualified_name
        text = tool.description.strip() or f"The tool {tool.name!r}."
        self.description = f"[MCP server {tool.server}] {text}"[:DESCRIPTION_CHARS]

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name, description=self.description,
            parameters=_object_schema(self._tool.input_schema),
        )

    async def run(self, ctx: ToolContext, args: AnyArguments) -> str:
        try:
            connections = await self._connections()
        except Exception as exc:
            log.warning("MCP server %s could not connect: %s", self._tool.server, exc)
            return f"Error: MCP server {self._tool.server!r} could not connect: {exc}"
        result = await connections.call(self.name, args.model_dump())
        if result.is_error:
            return f"Error from MCP tool {self._tool.name!r}: {result.text}"
        return result.text


class McpServerDown(Tool):
    """Stands in for the tools of a server that could not be reached this turn."""

    discoverable = False
    deferred = True
    Args = NoArguments
    description = "An MCP server that is down."
    name = "mcp_unavailable"

    def __init__(self, qualified: str, reason: str, server: str = ""):
        self.name = qualified
        self.group = f"mcp:{server}"
        self.reason = reason
        self.description = (
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
        tools.append(McpServerDown(name, reason, server))
    return tools


class LazyConnections:
    """Connections opened on first use, by a task of their own (their transports must be entered
    and left in one task), and closed by ``aclose``."""

    def __init__(self, servers: dict[str, McpServerConfig]):
        self._servers = servers
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[McpConnections] | None = None
        self._closing = asyncio.Event()

    async def get(self) -> McpConnections:
        if self._task is None:
            self._ready = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._own(self._ready), name="mcp-connections")
        assert self._ready is not None
        return await asyncio.shield(self._ready)

    async def _own(self, ready: asyncio.Future[McpConnections]) -> None:
        from core.mcp.client import McpConnections

        try:
            async with McpConnections(self._servers) as connections:
                ready.set_result(connections)
                await self._closing.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                log.warning("closing the MCP connections failed: %s", exc)

    async def aclose(self) -> None:
        self._closing.set()
        if self._task is not None:
            await self._task


def _cache_key(servers: dict[str, McpServerConfig]) -> str:
    return json.dumps({name: c.model_dump() for name, c in servers.items()}, sort_keys=True)


def remembered_tools(servers: dict[str, McpServerConfig]) -> list[McpTool] | None:
    found = _remembered.get(_cache_key(servers))
    if found is None or time.monotonic() - found[1] > TOOLS_TTL:
        return None
    return found[0]


def forget_tools() -> None:
    _remembered.clear()


@asynccontextmanager
async def mcp_tools(ctx: ToolContext) -> AsyncIterator[list[Tool]]:
    """A ``ToolProvider``: the tools of the enabled MCP servers for one turn."""
    servers = {
        name: config for name, config in configured_servers(ctx.settings).items()
        if config.enabled
    }
    if not servers:
        yield []
        return
    known = remembered_tools(servers)
    if known is not None:
        lazy = LazyConnections(servers)
        try:
            yield [McpServerTool(lazy.get, tool) for tool in known]
        finally:
            await lazy.aclose()
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

            async def opened() -> McpConnections:
                return connections

            listed = connections.tools()
            if not connections.failures():
                _remembered[_cache_key(servers)] = (listed, time.monotonic())
            tools = [McpServerTool(opened, tool) for tool in listed]
            tools += _down_tools(connections.failures(), {tool.name for tool in tools})
        yield tools
