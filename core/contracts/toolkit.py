"""The tool interface, the per-call context, and a toolset that runs calls safely."""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel, ValidationError

from core.errors import IrisUsageError, TookTooLong, ToolRetry
from core.messages import Message, ToolCall
from core.model.llm import ToolSpec

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.asked import Asked
    from core.contracts.services import Services
    from core.store import Store

log = logging.getLogger("iris.tools")


class TurnResource(Protocol):
    """Something a tool keeps open for the rest of its turn (the turn's browser)."""

    async def aclose(self) -> None: ...


async def close_resources(resources: dict[str, TurnResource]) -> None:
    """End what the turn's tools kept open; one that fails to close does not keep the others."""
    for name, resource in list(resources.items()):
        try:
            await resource.aclose()
        except Exception:
            log.exception("closing the turn's %s failed", name)
        resources.pop(name, None)


@dataclass(kw_only=True)
class ToolContext:
    """What a tool may know about the turn it runs in. Tools reach state only through it."""

    store: Store
    settings: Settings
    services: Services
    user_id: str
    session_id: str
    chat_key: str
    platform: str
    account: str
    inbox_id: int | None = None
    # Set when the tools run in a post-turn review rather than for the user: the note recorded
    # with what they change; looking at a skill there does not count as using it.
    review_note: str | None = None
    # The tools whose untrusted output (web pages, files, command output, MCP results) is in
    # the model's context: while any is, writes to memory and skills wait for the user
    # (``core.asking.confirm``), so instructions hidden in that content cannot persist themselves.
    tainted_by: set[str] = field(default_factory=set)
    # Catalogue tools this session has loaded, in order (core.tools.catalogue).
    loaded_tools: list[str] = field(default_factory=list)
    # The toolset running this turn's calls: a tool that calls other tools (execute_code)
    # dispatches through it, so every check of a direct call applies. None: not offered here.
    toolset: Toolset | None = None
    # A question the ``clarify`` tool asked: the turn ends with it as its answer.
    asked: Asked | None = None
    # Browser actions run this turn (bounded by ``browser_pages_per_turn``).
    browser_actions: int = 0
    # What tools keep open until the turn ends (its browser), by name; the turn closes them
    # (``close_resources``). None where nothing would: a tool then closes what it opens.
    resources: dict[str, TurnResource] | None = None


@dataclass(frozen=True)
class ToolOutcome:
    """One dispatched call: ``text`` is what the model reads (errors as ``Error: …``, outside
    content wrapped as untrusted); ``output`` is the tool's own text (the error's message when
    ``ok`` is false), for code that calls tools (execute_code) rather than a model."""

    text: str
    ok: bool
    output: str


class Tool(ABC):
    # Fixed per tool class, except for tools made at run time (an MCP server's) that set them
    # per instance.
    name: str
    description: str
    Args: ClassVar[type[BaseModel]]
    untrusted_output: ClassVar[bool] = False  # output comes from outside: wrapped as data
    discoverable: ClassVar[bool] = True  # False: not in default_tools(), added by its owner
    # Rarely used: not sent with every request but listed in the load_tools catalogue, and
    # sent for the rest of a session once loaded (core.tools.catalogue).
    deferred: ClassVar[bool] = False
    brief: ClassVar[str] = ""  # the catalogue's line for a deferred tool
    group: str | None = None  # deferred tools listed and loaded together (an MCP server's)

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description,
                        parameters=copy.deepcopy(_args_schema(self.Args)))

    def offered(self, settings: Settings) -> bool:
        """Whether the configuration lets the model use this tool (e.g. a search provider)."""
        return True

    def taints(self, output: str) -> bool:
        """Whether ``output`` brings outside content into the turn (see ``tainted_by``)."""
        return self.untrusted_output

    @abstractmethod
    async def run(self, ctx: ToolContext, args: Any) -> str: ...


@functools.cache
def _args_schema(args: type[BaseModel]) -> dict[str, Any]:
    """A tool's JSON schema, generated once per process (pydantic takes milliseconds), and
    compacted: every token of it is sent on every model call."""
    schema = compact_schema(args.model_json_schema())
    assert isinstance(schema, dict)
    return schema


def compact_schema(node: Any) -> Any:
    """A JSON schema without what a model does not need: titles, ``null`` alternatives of
    optional fields (leaving a field out means None), ``default: null``, ``minLength: 1``.
    Validation is pydantic's, on the full model, so nothing is lost in checking arguments."""
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if (key == "default" and value is None) or (key == "minLength" and value == 1):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: compact_schema(prop) for name, prop in value.items()}
        else:
            out[key] = compact_schema(value)
    options = out.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(options) and isinstance(kept[0], dict):
            del out["anyOf"]
            out = {**kept[0], **out}
    return out


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


class Toolset:
    def __init__(self, tools: Iterable[Tool], *, catalogue: bool = True):
        # catalogue=False: deferred tools are sent like the others (a small demo toolset)
        self.catalogue = catalogue
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools named {tool.name!r}")
            self._tools[tool.name] = tool

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    def specs(self) -> list[ToolSpec]:
        return [tool.spec() for tool in self._tools.values()]

    def offered(self, settings: Settings) -> Toolset:
        """The tools this configuration offers."""
        return Toolset((t for t in self._tools.values() if t.offered(settings)),
                       catalogue=self.catalogue)

    def without(self, names: Iterable[str]) -> Toolset:
        drop = set(names)
        return Toolset((t for n, t in self._tools.items() if n not in drop),
                       catalogue=self.catalogue)

    def with_tools(self, extra: Iterable[Tool]) -> Toolset:
        return Toolset([*self._tools.values(), *extra], catalogue=self.catalogue)

    async def call(self, ctx: ToolContext, call: ToolCall) -> Message:
        """Run one tool call. Every failure becomes a tool result the model can read."""
        outcome = await self.dispatch(ctx, call)
        return Message(role="tool", content=outcome.text, tool_call_id=call.id, name=call.name)

    async def call_all(self, ctx: ToolContext, calls: Iterable[ToolCall]) -> list[Message]:
        return list(await asyncio.gather(*(self.call(ctx, call) for call in calls)))

    async def dispatch(self, ctx: ToolContext, call: ToolCall) -> ToolOutcome:
        """Run one tool call: argument checks, the tool, error handling, untrusted wrapping
        and tainting, exactly as for a model's call."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            return _failed(f"there is no tool named {call.name!r}. Available tools: {known}.")
        try:
            args = tool.Args.model_validate(call.parsed_arguments())
        except (ValueError, json.JSONDecodeError) as exc:
            if isinstance(exc, ValidationError):
                return _failed(f"invalid arguments for {call.name}: {_validation_message(exc)}")
            return _failed(f"the arguments for {call.name} are not a JSON object: {exc}")
        try:
            output = await tool.run(ctx, args)
        except (ToolRetry, IrisUsageError, TookTooLong) as exc:
            return _failed(str(exc))
        except Exception as exc:
            log.exception("tool %s failed", call.name)
            return _failed(f"{call.name} failed: {type(exc).__name__}: {exc}")
        if tool.untrusted_output:
            from core.security.untrusted import wrap_untrusted

            if tool.taints(output):
                ctx.tainted_by.add(call.name)
            return ToolOutcome(wrap_untrusted(call.name, output), True, output)
        return ToolOutcome(output, True, output)


def _failed(message: str) -> ToolOutcome:
    return ToolOutcome(f"Error: {message}", False, message)
