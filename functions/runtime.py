"""The per-process runtime: settings, store, dispatcher and the turn's dependencies, built once
per container (or emulator process) and shared by every request and worker in it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from core.config import Settings
from core.dispatch import Dispatcher, Notifier
from core.platforms.delivery import DeliveryService, Sender
from core.platforms.senders import default_senders
from core.routing import ModelRouter, SettingsRouter
from core.store import Store, open_store

if TYPE_CHECKING:
    from core.context import PromptSection
    from core.store.inbox import InboxEntry
    from core.tools.base import Toolset
    from core.turn import ToolProvider, TurnDeps, TurnOutcome

# Runs after a turn is committed and its reply sent (memory and skill reviews, titles...).
AfterTurn = Callable[["Runtime", "InboxEntry", "TurnOutcome"], Awaitable[None]]


# The turn machinery (tools, prompt sections, hooks) is imported on first use, so a container
# that only acknowledges webhooks and hands the work off never loads it.


def default_sections() -> list[PromptSection]:
    """The system prompt's sections, in order. The prompt is frozen per session, so the order
    and content must only depend on state at session start."""
    from core.context import base_section
    from core.memory.snapshot import memory_section
    from core.skills.index import skills_section

    return [base_section, memory_section, skills_section]


def default_after_turn() -> list[AfterTurn]:
    from core.acting.workspaces import settle_after_turn
    from core.identity.linking import complete_links_after_turn
    from core.memory.review import review_after_turn
    from core.search.after_turn import embed_after_turn
    from core.sessions.titles import title_session
    from core.skills.review import skill_review

    return [
        settle_after_turn, title_session, skill_review, review_after_turn,
        complete_links_after_turn, embed_after_turn,
    ]


def default_tool_providers() -> list[ToolProvider]:
    """Opened around every turn; each yields extra tools (MCP servers' tools)."""
    from core.acting.mcp_tools import mcp_tools

    return [mcp_tools]


@dataclass
class Runtime:
    """Shared per process. ``toolset``, ``sections``, ``after_turn`` and ``tool_providers`` are
    built on first use (and may be assigned to replace them)."""

    settings: Settings
    store: Store
    dispatcher: Dispatcher
    router: ModelRouter
    notifier: Notifier = field(default_factory=Notifier)
    senders: dict[str, Sender] = field(default_factory=dict)
    services: dict[str, Any] = field(default_factory=dict)
    checkpoint: Any = None

    @cached_property
    def toolset(self) -> Toolset:
        from core.tools import default_toolset

        return default_toolset()

    @cached_property
    def sections(self) -> list[PromptSection]:
        return default_sections()

    @cached_property
    def after_turn(self) -> list[AfterTurn]:
        return default_after_turn()

    @cached_property
    def tool_providers(self) -> list[ToolProvider]:
        return default_tool_providers()

    def turn_deps(self) -> TurnDeps:
        from core.acting.subagents import SubagentRunner
        from core.turn import TurnDeps

        self.services.setdefault("subagents", SubagentRunner(self.turn_deps))
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
        senders=senders if senders is not None else default_senders(settings),
    )
    if toolset is not None:
        rt.toolset = toolset
    rt.services.setdefault("senders", rt.senders)
    rt.services.setdefault("router", rt.router)
    rt.services.setdefault("dispatcher", rt.dispatcher)  # tools that start other chats' turns
    return rt
