"""What a turn runs with: the store, settings and services, the tools and prompt sections
offered, and the per-turn resources that add tools (``ToolProvider``). Built by the composition
root (``functions.runtime``) and read by the loop (``core.turn.loop``) and by subagents."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.contracts.prompt import PromptSection
from core.contracts.toolkit import Tool, ToolContext, Toolset

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.services import Services
    from core.model.priority import InteractiveFirst
    from core.model.streaming import Answers
    from core.store import Store


# Opens per-turn resources (MCP sessions, sandboxes...) and yields the extra tools they offer;
# closed when the turn ends, whatever happens.
ToolProvider = Callable[[ToolContext], AbstractAsyncContextManager[list[Tool]]]


@dataclass(kw_only=True)
class TurnDeps:
    store: Store
    settings: Settings
    services: Services
    toolset: Toolset
    sections: Sequence[PromptSection]
    tool_providers: Sequence[ToolProvider] = ()
    checkpoint: Callable[[str], None] = lambda step: None  # fault-injection point for tests
    priority: InteractiveFirst | None = None  # scheduled turns give way to chat turns
    answers: Answers | None = None  # where a streaming caller reads the answer as it comes
