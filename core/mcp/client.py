"""Connections to the MCP servers of iris.yaml, open for the length of one agent turn.

The model sees each server tool as ``mcp__<server>__<tool>``. A server that cannot be reached is
reported by ``failures()`` and its calls come back as error results; nothing here crashes a turn.
``mcp`` takes about a second to import, so it is imported inside the functions that talk to
servers, never when this module is imported.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

import anyio
import anyio.to_thread

from core.config.mcp import McpServerConfig

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp import Client
    from mcp_types import CallToolResult

logger = logging.getLogger(__name__)

MAX_NAME_LENGTH = 64
INHERITED_ENV = ("PATH", "HOME", "LANG")
CLOSE_TIMEOUT = 5.0
CALL_GRACE = 2.0
SETTLE_MARGIN = 0.25
MAX_TOOL_PAGES = 100
STDERR_TAIL_CHARS = 800
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class McpTool:
    server: str
    name: str
    qualified_name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class McpCallResult:
    text: str
    is_error: bool


class McpError(Exception):
    """An MCP server could not be reached or did not answer; the message names the server."""


def qualified_name(server: str, tool: str, taken: set[str]) -> str:
    """``mcp__<server>__<tool>`` made safe for model APIs: [A-Za-z0-9_-], at most 64 characters,
    and not in ``taken``. Long or clashing names end in a short hash of the original pair."""
    name = _UNSAFE.sub("_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_NAME_LENGTH and name not in taken:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()
    for extra in range(len(digest) - 8):
        suffix = "_" + digest[extra : extra + 8]
        candidate = name[: MAX_NAME_LENGTH - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
    raise ValueError(f"cannot make a unique tool name for {server}/{tool}")


class McpConnections:
    """Open the enabled servers concurrently, keep them open inside ``async with``.

    Each server lives in its own task, which enters and exits its transport, so the transports'
    cancel scopes never cross tasks. Enter and exit this object in one task.
    """

    def __init__(self, servers: dict[str, McpServerConfig]):
        self._servers = dict(servers)
        self._listed: dict[str, list[Any]] = {}
        self._clients: dict[str, Client] = {}
        self._failures: dict[str, str] = {}
        self._stderr: dict[str, IO[bytes]] = {}
        self._tools: list[McpTool] = []
        self._by_name: dict[str, McpTool] = {}
        self._group: TaskGroup | None = None
        self._closing: anyio.Event | None = None

    async def __aenter__(self) -> McpConnections:
        if self._group is not None:
            raise RuntimeError("McpConnections is already open")
        self._listed.clear()
        self._failures.clear()
        self._tools, self._by_name = [], {}
        self._closing = anyio.Event()
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        try:
            if any(config.enabled for config in self._servers.values()):
                await anyio.to_thread.run_sync(_import_mcp)
            started = anyio.current_time()
            settled: dict[str, anyio.Event] = {}
            for name, config in self._servers.items():
                if config.enabled:
                    settled[name] = anyio.Event()
                    self._group.start_soon(
                        self._serve, name, config, started, settled[name], name=f"mcp:{name}"
                    )
            for name, event in settled.items():
                timeout = self._servers[name].connect_timeout
                with anyio.move_on_after(started + timeout + SETTLE_MARGIN - anyio.current_time()):
                    await event.wait()
                if not event.is_set():
                    self._fail(name, f"timed out after {timeout:g}s")
        except BaseException:
            self._closing.set()
            group, self._group = self._group, None
            group.cancel_scope.cancel()
            group.cancel_scope.shield = True
            await group.__aexit__(None, None, None)
            raise
        self._register_tools()
        return self

    async def __aexit__(self, *exc: object) -> None:
        group, self._group = self._group, None
        if self._closing is not None:
            self._closing.set()
        self._clients.clear()
        if group is not None:
            await group.__aexit__(None, None, None)

    def tools(self) -> list[McpTool]:
        return list(self._tools)

    def failures(self) -> dict[str, str]:
        return dict(self._failures)

    async def call(self, qualified_name: str, arguments: dict[str, Any]) -> McpCallResult:
        """Call a tool; every failure comes back as an ``is_error`` result the model can read."""
        from mcp import MCPError

        tool = self._by_name.get(qualified_name)
        if tool is None:
            return McpCallResult(text=self._unknown_tool(qualified_name), is_error=True)
        client = self._clients.get(tool.server)
        if client is None:
            return _error(f"MCP server {tool.server!r} is not connected.")
        timeout = self._servers[tool.server].call_timeout
        timed_out = _error(
            f"MCP tool {tool.name!r} on server {tool.server!r} timed out after {timeout:g}s"
        )
        try:
            with anyio.fail_after(timeout + CALL_GRACE):
                result = await client.call_tool(
                    tool.name, arguments or {}, read_timeout_seconds=timeout
                )
        except TimeoutError:
            return timed_out
        except MCPError as exc:
            if exc.code == _REQUEST_TIMEOUT:
                return timed_out
            if exc.code == _CONNECTION_CLOSED:
                return _error(
                    f"MCP server {tool.server!r} closed the connection; "
                    f"the call to {tool.name!r} did not complete"
                )
            return _error(f"MCP server {tool.server!r} rejected the call to {tool.name!r}: {exc}")
        except Exception as exc:
            return _error(f"MCP tool {tool.name!r} on server {tool.server!r} failed: {_why(exc)}")
        return render_result(result, tool)

    def _unknown_tool(self, qualified_name: str) -> str:
        for server, reason in self._failures.items():
            if qualified_name.startswith(_UNSAFE.sub("_", f"mcp__{server}__")):
                return reason
        return f"Unknown MCP tool {qualified_name!r}."

    def _register_tools(self) -> None:
        taken: set[str] = set()
        for server in self._servers:
            seen: set[str] = set()
            for tool in self._listed.get(server, []):
                if tool.name in seen:
                    continue
                seen.add(tool.name)
                name = qualified_name(server, tool.name, taken)
                taken.add(name)
                self._tools.append(
                    McpTool(
                        server=server,
                        name=tool.name,
                        qualified_name=name,
                        description=tool.description or tool.title or "",
                        input_schema=dict(tool.input_schema),
                    )
                )
        self._by_name = {tool.qualified_name: tool for tool in self._tools}

    async def _serve(
        self, name: str, config: McpServerConfig, started: float, settled: anyio.Event
    ) -> None:
        """Own one server's connection from start to close; record why it failed, if it did."""
        assert self._closing is not None
        scope = anyio.CancelScope(deadline=started + config.connect_timeout)
        connected = False
        with ExitStack() as files:
            if config.command:
                self._stderr[name] = files.enter_context(tempfile.TemporaryFile())
            try:
                with scope:
                    async with open_client(config, self._stderr.get(name)) as client:
                        tools = await list_tools(client)
                        if name in self._failures:
                            return
                        self._listed[name] = tools
                        self._clients[name] = client
                        connected = True
                        scope.deadline = math.inf
                        settled.set()
                        await self._closing.wait()
                        scope.deadline = anyio.current_time() + CLOSE_TIMEOUT
                if scope.cancelled_caught and not connected:
                    self._fail(name, f"timed out after {config.connect_timeout:g}s")
            except Exception as exc:
                if connected:
                    logger.warning("MCP server %r stopped: %s", name, _why(exc))
                else:
                    self._fail(name, _why(exc, config))
            finally:
                self._clients.pop(name, None)
                self._stderr.pop(name, None)
                settled.set()

    def _fail(self, name: str, reason: str) -> None:
        if name in self._failures:
            return
        tail = _tail(self._stderr.get(name))
        if tail:
            logger.debug("stderr of MCP server %r:\n%s", name, tail)
            reason = f"{reason} (stderr: {tail})"
        self._failures[name] = f"MCP server {name!r} could not connect: {reason}"


async def list_server_tools(name: str, config: McpServerConfig) -> list[McpTool]:
    """Connect to one server (even a disabled one) and list its tools; raise McpError if not."""
    servers = {name: config.model_copy(update={"enabled": True})}
    async with McpConnections(servers) as connections:
        failure = connections.failures().get(name)
        if failure is not None:
            raise McpError(failure)
        return connections.tools()


@asynccontextmanager
async def open_client(
    config: McpServerConfig, stderr: IO[bytes] | None = None
) -> AsyncIterator[Client]:
    """An initialised ``mcp.Client`` for one server, over stdio or streamable HTTP."""
    from mcp import Client, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    options: dict[str, Any] = {"cache": None, "client_info": _client_info()}
    if config.command:
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env=child_environment(config.env),
            cwd=config.cwd,
        )
        errlog = stderr if stderr is not None else open(os.devnull, "w")  # noqa: SIM115
        try:
            # stdio_client hands errlog to the child as its stderr (a file descriptor): the
            # binary temporary file we read the tail of is as good as the TextIO it declares.
            transport = stdio_client(params, errlog=cast("TextIO", errlog))
            async with Client(transport, **options) as client:
                yield client
        finally:
            if errlog is not stderr:
                errlog.close()
        return

    import httpx2

    assert config.url is not None
    timeout = httpx2.Timeout(config.connect_timeout, read=max(300.0, config.call_timeout))
    answers: list[httpx2.Response] = []

    async def note_answer(response: httpx2.Response) -> None:
        if response.request.method == "POST":
            answers[:] = [response]

    async with (
        httpx2.AsyncClient(
            headers=dict(config.headers),
            timeout=timeout,
            event_hooks={"response": [note_answer]},
        ) as http,
        AsyncExitStack() as stack,
    ):
        transport = streamable_http_client(config.url, http_client=http)
        try:
            client = await stack.enter_async_context(Client(transport, **options))
        except Exception as exc:
            if not answers or answers[0].status_code < 400:
                raise
            raise McpError(_refusal(config.url, answers[0])) from exc
        yield client


async def list_tools(client: Client) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None or cursor in seen:
            break
        seen.add(cursor)
    return tools


def child_environment(extra: dict[str, str]) -> dict[str, str]:
    """What a stdio server sees of our environment: PATH, HOME, LANG and its own ``env``."""
    inherited = {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
    return inherited | extra


def render_result(result: CallToolResult, tool: McpTool | None = None) -> McpCallResult:
    """Text parts joined; structured content as JSON when there is no text; other parts named."""
    from mcp_types import (
        AudioContent,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    parts: list[str] = []
    has_text = False
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
            has_text = True
        elif isinstance(block, ImageContent | AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {_size(block.data)}]")
        elif isinstance(block, ResourceLink):
            parts.append(f"[resource link: {block.uri}]")
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f"[resource: {resource.uri}]\n{resource.text}")
                has_text = True
            else:
                mime = resource.mime_type or "binary"
                parts.append(f"[resource: {resource.uri}, {mime}, {_size(resource.blob)}]")
        else:
            kind = getattr(block, "type", type(block).__name__)
            parts.append(f"[{kind} content]")
    if not has_text and result.structured_content is not None:
        parts.insert(0, json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts)
    if not text:
        what = f"MCP tool {tool.name!r}" if tool else "The MCP tool"
        text = f"{what} reported an error without a message" if result.is_error else "(no output)"
    return McpCallResult(text=text, is_error=bool(result.is_error))


_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001


def _error(text: str) -> McpCallResult:
    return McpCallResult(text=text, is_error=True)


def _refusal(url: str, response: Any) -> str:
    status = f"HTTP {response.status_code} {response.reason_phrase}".strip()
    hint = " (check its 'headers' setting)" if response.status_code in (401, 403) else ""
    return f"{url} answered {status}{hint}"


def _why(exc: BaseException, config: McpServerConfig | None = None) -> str:
    from mcp import MCPError

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, McpError):
        return str(exc)
    if config is not None and config.command:
        if isinstance(exc, FileNotFoundError):
            missing = config.cwd if config.cwd and exc.filename == config.cwd else config.command
            return f"not found: {missing!r}"
        if isinstance(exc, PermissionError):
            return f"permission denied running {config.command!r}"
    if isinstance(exc, MCPError):
        if exc.code == _CONNECTION_CLOSED:
            return "the server closed the connection"
        return f"protocol error: {exc.message}"
    message = str(exc).strip()
    if config is not None and config.url and type(exc).__module__.startswith("httpx"):
        return f"cannot reach {config.url}: {message or type(exc).__name__}"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _tail(stderr: IO[bytes] | None) -> str:
    if stderr is None:
        return ""
    try:
        stderr.seek(0, os.SEEK_END)
        size = stderr.tell()
        stderr.seek(max(0, size - STDERR_TAIL_CHARS))
        return stderr.read().decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return ""


def _size(data: str) -> str:
    size = len(data) * 3 // 4
    return f"{size / 1024:.1f} KiB" if size >= 1024 else f"{size} bytes"


def _import_mcp() -> None:
    """Import the SDK before connect deadlines start: the first import takes about a second."""
    import httpx2  # noqa: F401
    import mcp.client.streamable_http  # noqa: F401


def _client_info() -> Any:
    from importlib.metadata import PackageNotFoundError, version

    from mcp_types import Implementation

    try:
        release = version("iris-agent")
    except PackageNotFoundError:
        release = "0"
    return Implementation(name="iris-agent", version=release)
