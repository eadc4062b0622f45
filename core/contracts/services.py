"""The services a turn, its tools, commands and after-turn hooks use beyond the store: built
once per process by the composition root (``functions.runtime.compose``), passed down typed.

Each field is a Protocol of what its users call, so this module (and everything that takes a
``Services``) imports none of the packages that implement them: ``core.acting.workspaces``,
``core.acting.subagents``, ``core.model.routing``'s routers, the platforms' senders and the
dispatchers in ``functions``. ``core.turn.services.standalone_services`` builds one outside a
runtime (the CLI, scripts, tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from core.contracts.dispatch import ChatRef, Dispatcher
from core.contracts.senders import Sender

if TYPE_CHECKING:
    from core.model.routing import ModelRouter
    from sandboxes import Sandbox


class WorkspaceService(Protocol):
    """Each user's sandbox (``core.acting.workspaces.Workspaces``)."""

    def sandbox(self, user_id: str) -> Sandbox: ...

    def use(self, user_id: str) -> AbstractAsyncContextManager[Sandbox]:
        """The user's sandbox for one operation, marked used by the current turn."""
        ...

    def file_lock(self, user_id: str, path: str) -> asyncio.Lock: ...

    def was_used(self, user_id: str) -> bool: ...

    async def settle(self, user_id: str) -> bool:
        """After a turn: hibernate the sandbox if it was used and is idle now."""
        ...


@dataclass(frozen=True)
class ChildResult:
    task: str
    session_id: str
    status: str  # done | stopped | failed
    summary: str
    tool_calls: int


class DelegatingCall(Protocol):
    """What a child turn takes from the tool call that delegated it (a ``ToolContext``)."""

    services: Services
    user_id: str
    session_id: str
    account: str
    inbox_id: int | None
    tainted_by: set[str]


class Subagents(Protocol):
    """Runs a tool's delegated tasks as child turns (``core.acting.subagents.SubagentRunner``)."""

    async def run(
        self, parent: DelegatingCall, goal: str, context: str, tasks: Sequence[str]
    ) -> list[ChildResult]: ...


@dataclass(frozen=True, kw_only=True)
class Services:
    router: ModelRouter  # the main model, a user's /model choice, the side model
    dispatcher: Dispatcher  # starts other chats' turns (cron runs now, merged links)
    senders: Mapping[str, Sender]  # by platform: replies, typing, downloading voice notes
    workspaces: WorkspaceService  # each user's sandbox
    subagents: Subagents | None = None  # None where delegation is not offered


class NoDispatch:
    """No worker here: a chat with pending messages waits for the next tick's sweep."""

    async def drain(self, chat: ChatRef) -> None:
        return None
