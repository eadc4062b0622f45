"""The per-process runtime: settings, store, dispatcher and the turn's dependencies, built once
per container (or emulator process) and shared by every request and worker in it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.acting.mcp_tools import mcp_tools
from core.acting.subagents import SubagentRunner
from core.acting.workspaces import settle_after_turn
from core.config import Settings
from core.context import PromptSection, base_section
from core.dispatch import Dispatcher, Notifier
from core.identity.linking import complete_links_after_turn
from core.memory.review import review_after_turn
from core.memory.snapshot import memory_section
from core.platforms.delivery import DeliveryService, Sender
from core.platforms.senders import default_senders
from core.routing import ModelRouter, SettingsRouter
from core.sessions.titles import title_session
from core.skills.index import skills_section
from core.skills.review import skill_review
from core.store import Store, open_store
from core.tools import default_toolset
from core.tools.base import Toolset
from core.turn import ToolProvider, TurnDeps, TurnOutcome

if TYPE_CHECKING:
    from core.store.inbox import InboxEntry

# Runs after a turn is committed and its reply sent (memory and skill reviews, titles...).
AfterTurn = Callable[["Runtime", "InboxEntry", TurnOutcome], Awaitable[None]]


def default_sections() -> list[PromptSection]:
    """The system prompt's sections, in order. The prompt is frozen per session, so the order
    and content must only depend on state at session start."""
    return [base_section, memory_section, skills_section]


def default_after_turn() -> list[AfterTurn]:
    return [
        settle_after_turn, title_session, skill_review, review_after_turn,
        complete_links_after_turn,
    ]


def default_tool_providers() -> list[ToolProvider]:
    """Opened around every turn; each yields extra tools (MCP servers' tools)."""
    return [mcp_tools]


@dataclass
class Runtime:
    settings: Settings
    store: Store
    dispatcher: Dispatcher
    router: ModelRouter
    toolset: Toolset
    sections: list[PromptSection]
    notifier: Notifier = field(default_factory=Notifier)
    senders: dict[str, Sender] = field(default_factory=dict)
    services: dict[str, Any] = field(default_factory=dict)
    after_turn: list[AfterTurn] = field(default_factory=default_after_turn)
    tool_providers: list[ToolProvider] = field(default_factory=default_tool_providers)
    checkpoint: Any = None

    def turn_deps(self) -> TurnDeps:
        deps = TurnDeps(
            store=self.store, settings=self.settings, router=self.router,
            toolset=self.toolset, sections=self.sections, services=self.services,
            tool_providers=self.tool_providers,
        )
        if self.checkpoint is not None:
            deps.checkpoint = self.checkpoint
        return deps

    @property
    def delivery(self) -> DeliveryService:
        return DeliveryService(self.store, self.senders)


def build_runtime(
    settings: Settings,
    dispatcher: Dispatcher,
    *,
    store: Store | None = None,
    router: ModelRouter | None = None,
    toolset: Toolset | None = None,
    senders: dict[str, Sender] | None = None,
) -> Runtime:
    rt = Runtime(
        settings=settings,
        store=store or open_store(settings),
        dispatcher=dispatcher,
        router=router or SettingsRouter(settings),
        toolset=toolset or default_toolset(),
        sections=default_sections(),
        senders=senders if senders is not None else default_senders(settings),
    )
    rt.services.setdefault("senders", rt.senders)
    rt.services.setdefault("subagents", SubagentRunner(rt.turn_deps))
    rt.services.setdefault("router", rt.router)
    rt.services.setdefault("dispatcher", rt.dispatcher)  # tools that start other chats' turns
    return rt
