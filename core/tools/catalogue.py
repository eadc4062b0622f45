"""Rarely used tools (and MCP tools) offered through a catalogue instead of in every request.

Each request carries the core tools, then ``load_tools`` (whose description lists the
catalogue: one line per tool, one per MCP server), then the catalogue tools this session has
loaded, in loading order. Loading appends to the end of the list and is remembered for the
session (``store.session_tools``), so every later request of the session sends the same tools
in the same order: the prompt prefix (tools, then the session's frozen system prompt) changes
once per load and is cacheable again from the next request on. A catalogue tool called
without loading runs all the same, and is loaded by that call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.contracts.toolkit import Tool, ToolContext, Toolset
from core.tools.load_tools import CatalogueEntry, LoadTools, record_loaded

if TYPE_CHECKING:
    from core.messages import Message, ToolCall
    from core.model.llm import ToolSpec

BRIEF_CHARS = 90


def brief(tool: Tool) -> str:
    text = tool.brief or tool.description.split(". ")[0]
    text = " ".join(text.split())
    return text if len(text) <= BRIEF_CHARS else text[: BRIEF_CHARS - 1] + "…"


def entries(catalogue: Sequence[Tool]) -> list[CatalogueEntry]:
    """One entry per ungrouped tool, one per group (an MCP server: its tools' names)."""
    out: list[CatalogueEntry] = []
    groups: dict[str, list[Tool]] = {}
    for tool in catalogue:
        if tool.group:
            if tool.group not in groups:
                groups[tool.group] = []
                out.append(CatalogueEntry(tool.group, "", ()))  # filled in below
            groups[tool.group].append(tool)
        else:
            out.append(CatalogueEntry(tool.name, brief(tool), (tool.name,)))
    for i, entry in enumerate(out):
        if entry.name in groups:
            members = groups[entry.name]
            names = ", ".join(t.name.rsplit("__", 1)[-1] for t in members)
            line = f"{len(members)} tool{'s' if len(members) > 1 else ''}: {names}"
            briefs = [t.brief for t in members if t.brief]
            if briefs:  # a group of Iris' own says what it is for, not its members' names
                line = briefs[0]
            if len(line) > BRIEF_CHARS:
                line = line[: BRIEF_CHARS - 1] + "…"
            out[i] = CatalogueEntry(entry.name, line, tuple(t.name for t in members))
    return out


class SessionToolset:
    """The tools of one turn: what is sent (core + loaded) and what may be called (all)."""

    def __init__(self, toolset: Toolset, ctx: ToolContext):
        self.ctx = ctx
        listed = toolset.catalogue
        self.catalogue = {t.name: t for t in toolset.tools() if t.deferred and listed}
        core = [t for t in toolset.tools() if not (t.deferred and listed)]
        extra = [LoadTools(entries(list(self.catalogue.values())))] if self.catalogue else []
        self.callable = toolset.with_tools(extra)
        ctx.toolset = self.callable
        self._core_specs = [t.spec() for t in [*core, *extra]]

    def specs(self) -> list[ToolSpec]:
        loaded = [self.catalogue[n].spec() for n in self.ctx.loaded_tools if n in self.catalogue]
        return [*self._core_specs, *loaded]

    async def call_all(self, calls: Sequence[ToolCall]) -> list[Message]:
        direct = [c.name for c in calls if c.name in self.catalogue]
        if direct:
            from core.lanes import in_store_lane

            await in_store_lane(self.ctx.user_id, record_loaded, self.ctx, direct)
        return await self.callable.call_all(self.ctx, calls)
