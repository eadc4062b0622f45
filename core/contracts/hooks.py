"""After-turn hooks: work that runs once a turn is committed, its reply sent and its chat's
lease released (sandbox hibernation, titles, skill and memory reviews, account-link merges,
search vectors). Best effort: a failing hook is logged, never retried, and loses no message."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.outcome import TurnOutcome
    from core.contracts.services import Services
    from core.store import Store
    from core.store.inbox import InboxEntry


class SessionIndexer(Protocol):
    """Where a runtime sends sessions to be indexed off the turn's path: the indexing child
    process (core.search.indexer), or in the cloud the deployed app's ``Indexer`` function
    (functions/indexer_modal.py)."""

    def request(self, user_id: str, session_id: str) -> bool: ...

    def close(self) -> None: ...


@dataclass(frozen=True, kw_only=True)
class HookContext:
    store: Store
    settings: Settings
    services: Services
    entry: InboxEntry  # the inbox entry the turn answered
    outcome: TurnOutcome
    indexer: SessionIndexer | None = None  # with search_indexer=process: child or function

    @property
    def user_id(self) -> str:
        return self.entry.user_id


AfterTurn = Callable[[HookContext], Awaitable[object]]
