"""The services a turn, its tools, commands and after-turn hooks use beyond the store: built
once per process by the composition root (``functions.runtime.compose``), passed down typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.acting.subagents import SubagentRunner
    from core.acting.workspaces import Workspaces
    from core.config import Settings
    from core.dispatch import Dispatcher
    from core.model.routing import ModelRouter
    from core.platforms.senders import Sender
    from core.store import Store


@dataclass(frozen=True, kw_only=True)
class Services:
    router: ModelRouter  # the main model, a user's /model choice, the side model
    dispatcher: Dispatcher  # starts other chats' turns (cron runs now, merged links)
    senders: Mapping[str, Sender]  # by platform: replies, typing, downloading voice notes
    workspaces: Workspaces  # each user's sandbox
    subagents: SubagentRunner | None = None  # None where delegation is not offered

    @classmethod
    def standalone(
        cls, settings: Settings, store: Store, *, router: ModelRouter | None = None,
        dispatcher: Dispatcher | None = None,
    ) -> Services:
        """Services for code running outside a runtime (the CLI, scripts, unit tests): the
        configured models, no senders, and no dispatcher (chats wait for the sweeper)."""
        from core.acting.workspaces import Workspaces
        from core.model.routing import SettingsRouter

        return cls(
            router=router or SettingsRouter(settings), dispatcher=dispatcher or NoDispatch(),
            senders={}, workspaces=Workspaces(settings, store),
        )


class NoDispatch:
    """No worker here: a chat with pending messages waits for the next tick's sweep."""

    async def drain(self, chat: object) -> None:
        return None
