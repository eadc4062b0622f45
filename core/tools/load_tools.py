"""``load_tools``: load catalogue tools (rarely used ones, MCP servers') for the session."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from pydantic import BaseModel, Field

from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry


class CatalogueEntry(NamedTuple):
    name: str  # a tool's name, or a group's (``mcp:<server>``)
    line: str
    tools: tuple[str, ...]  # what loading it loads


class LoadToolsArgs(BaseModel):
    names: list[str] = Field(min_length=1, max_length=20)


class LoadTools(Tool):
    """Built per turn with the catalogue (``core.tools.catalogue``), not discovered."""

    name = "load_tools"
    description = "Load tools for this session."
    Args = LoadToolsArgs
    discoverable = False

    def __init__(self, catalogue: Sequence[CatalogueEntry]):
        self.catalogue = {entry.name: entry for entry in catalogue}
        listing = "; ".join(f"{e.name} ({e.line})" for e in catalogue)
        self.description = f"Load tools for this session: {listing}."

    async def run(self, ctx: ToolContext, args: LoadToolsArgs) -> str:
        members = {tool: entry.name for entry in self.catalogue.values() for tool in entry.tools}
        unknown = [n for n in args.names if n not in self.catalogue and n not in members]
        if unknown:
            raise ToolRetry(f"no catalogue entry named {', '.join(map(repr, unknown))}; "
                            f"the catalogue has {', '.join(self.catalogue)}")
        wanted = [tool for name in args.names
                  for tool in (self.catalogue[name].tools if name in self.catalogue else (name,))]
        from core.lanes import in_store_lane

        fresh = await in_store_lane(ctx.user_id, record_loaded, ctx, wanted)
        already = [n for n in dict.fromkeys(wanted) if n not in fresh]
        parts = []
        if fresh:
            parts.append(f"Loaded {', '.join(fresh)}: call {'them' if len(fresh) > 1 else 'it'}"
                         " directly from now on.")
        if already:
            parts.append(f"{', '.join(already)}: already loaded.")
        return " ".join(parts)


def record_loaded(ctx: ToolContext, names: Sequence[str]) -> list[str]:
    """Load ``names`` for the rest of the session; returns those not loaded before."""
    fresh = [n for n in dict.fromkeys(names) if n not in ctx.loaded_tools]
    if fresh:
        ctx.store.session_tools.load(ctx.user_id, ctx.session_id, fresh)
        ctx.loaded_tools.extend(fresh)
    return fresh
