"""The composition root: ``compose(settings)`` builds a process's runtime (store, dispatcher,
model router, platform senders, delivery) and binds what needs binding; every entry point (the
web app, the Modal containers, the emulator, the CLI, tests and benchmarks) calls it.

The turn machinery (tools, prompt sections, after-turn hooks, tool providers and the services
they share) is built on first use, so a container that only acknowledges webhooks and hands
the work off never imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from core.config import Settings
from core.contracts.dispatch import Dispatcher, Notifier
from core.contracts.senders import Sender
from core.model.priority import InteractiveFirst
from core.model.routing import ModelRouter, SettingsRouter
from core.model.streaming import AnswerFeeds, Answers
from core.platforms.delivery import DeliveryService
from core.store import Store, open_store

if TYPE_CHECKING:
    from core.clock import Clock
    from core.contracts.deps import ToolProvider, TurnDeps
    from core.contracts.hooks import AfterTurn, HookContext, SessionIndexer
    from core.contracts.outcome import TurnOutcome
    from core.contracts.prompt import PromptSection
    from core.contracts.services import Services
    from core.contracts.toolkit import Toolset
    from core.store.inbox import InboxEntry
    from core.web.fetch import Resolver


def default_sections() -> list[PromptSection]:
    """The system prompt's sections, in order. The prompt is frozen per session, so the order
    and content must only depend on state at session start."""
    from core.memory.persona import persona_section
    from core.memory.snapshot import memory_section
    from core.teams.prompt import skills_after_team_notes, team_notes_section
    from core.turn.sections import base_section

    return [
        base_section,
        persona_section,
        memory_section,
        team_notes_section,
        skills_after_team_notes,
    ]


def default_after_turn() -> list[AfterTurn]:
    from core.acting.workspaces import settle_after_turn
    from core.asking.clarify_close import close_buttons_after_turn
    from core.identity.linking import complete_links_after_turn
    from core.learning.memory_review import review_after_turn
    from core.learning.skill_outcomes import skill_outcomes
    from core.learning.skill_review import skill_review
    from core.platforms.speech import speak_after_turn
    from core.search.after_turn import embed_after_turn
    from core.sessions.titles import title_session

    return [
        close_buttons_after_turn, speak_after_turn, settle_after_turn, title_session,
        skill_outcomes, skill_review, review_after_turn, complete_links_after_turn,
        embed_after_turn,
    ]


def default_tool_providers() -> list[ToolProvider]:
    """Opened around every turn; each yields extra tools (MCP servers' tools)."""
    from core.acting.mcp_tools import mcp_tools

    return [mcp_tools]


@dataclass
class Runtime:
    """Shared by every request and worker of a process. The cached properties are the turn
    machinery, built on first use (tests may assign replacements before then)."""

    settings: Settings
    store: Store
    dispatcher: Dispatcher
    router: ModelRouter
    senders: Mapping[str, Sender]
    delivery: DeliveryService
    notifier: Notifier = field(default_factory=Notifier)
    answers: Answers = field(default_factory=AnswerFeeds)  # answers as they are produced
    checkpoint: Callable[[str], None] | None = None  # fault-injection point for crash tests
    embedded_model: bool = False  # the emulator runs its offline demo model
    priority: InteractiveFirst = field(default_factory=InteractiveFirst)
    resolver: Resolver | None = None  # DNS for URLs users choose (webhooks); None: the system's

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

    @cached_property
    def services(self) -> Services:
        from core.acting.subagents import SubagentRunner
        from core.acting.workspaces import Workspaces
        from core.contracts.services import Services

        return Services(
            router=self.router, dispatcher=self.dispatcher, senders=self.senders,
            workspaces=Workspaces(self.settings, self.store),
            subagents=SubagentRunner(self.turn_deps),
        )

    @cached_property
    def indexer(self) -> SessionIndexer | None:
        """Where this runtime's sessions are indexed off the turn's path: its indexing child
        (started on its first request), in the cloud the deployed app's ``Indexer`` function;
        None when vectors are computed elsewhere (``search_indexer`` inline or off)."""
        if self.settings.search_indexer != "process":
            return None
        if self.settings.dispatcher == "modal":
            from functions.indexer_modal import ModalIndexer

            return ModalIndexer(self.settings.modal_app)
        from core.search.indexer import Indexer

        return Indexer(self.settings)

    def close(self) -> None:
        """Stop what this runtime started (its indexing child) and close its store. Safe to
        call twice; a runtime dropped without it still stops its child when collected."""
        indexer = self.__dict__.get("indexer")
        if indexer is not None:
            indexer.close()
        self.store.close()

    def turn_deps(self) -> TurnDeps:
        from core.contracts.deps import TurnDeps

        deps = TurnDeps(
            store=self.store, settings=self.settings, services=self.services,
            toolset=self.toolset, sections=self.sections, tool_providers=self.tool_providers,
            answers=self.answers,
        )
        if self.checkpoint is not None:
            deps.checkpoint = self.checkpoint
        if self.settings.interactive_first:
            deps.priority = self.priority
        return deps

    def hook_context(self, entry: InboxEntry, outcome: TurnOutcome) -> HookContext:
        from core.contracts.hooks import HookContext

        return HookContext(store=self.store, settings=self.settings, services=self.services,
                           entry=entry, outcome=outcome, indexer=self.indexer)


@runtime_checkable
class NeedsRuntime(Protocol):
    """A dispatcher that runs turns in this process and so needs the runtime it serves."""

    def bind(self, runtime: Any) -> None: ...


@runtime_checkable
class RelaysAnswers(Protocol):
    """A dispatcher whose turns run in another process, so answers need relaying."""

    def answer_channel(self) -> Answers: ...


def dispatcher_for(settings: Settings) -> Dispatcher:
    """The configured dispatcher: Modal's ``.spawn()`` in the cloud, asyncio tasks locally."""
    if settings.dispatcher == "modal":
        from functions.dispatch_modal import ModalDispatcher

        return ModalDispatcher(settings.modal_app)
    from functions.dispatch import LocalDispatcher

    return LocalDispatcher()


def compose(
    settings: Settings,
    *,
    store: Store | None = None,
    clock: Clock | None = None,
    dispatcher: Dispatcher | None = None,
    router: ModelRouter | None = None,
    senders: Mapping[str, Sender] | None = None,
    toolset: Toolset | None = None,
    resolver: Resolver | None = None,
) -> Runtime:
    """A process's runtime from its settings; each part may be given instead (tests, tools)."""
    from core import lanes
    from core.platforms.registry import PLATFORMS

    lanes.configure(settings)
    store = store or open_store(settings, clock=clock)
    dispatcher = dispatcher or dispatcher_for(settings)
    if senders is None:
        from core.platforms.inbox import PLATFORM, InboxSender

        inbox = InboxSender(store, allow_hosts=frozenset(settings.web_allow_hosts),
                            resolver=resolver)
        senders = {**PLATFORMS.senders(settings), PLATFORM: inbox}
    rt = Runtime(
        settings=settings, store=store, dispatcher=dispatcher,
        router=router or SettingsRouter(settings), senders=senders,
        delivery=DeliveryService(store, senders, settings), resolver=resolver,
    )
    if isinstance(dispatcher, RelaysAnswers):
        rt.answers = dispatcher.answer_channel()
    if toolset is not None:
        rt.toolset = toolset
    if isinstance(dispatcher, NeedsRuntime):
        dispatcher.bind(rt)
    return rt
