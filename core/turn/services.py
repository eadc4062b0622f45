"""``Services`` for code that runs outside a runtime: the CLI, scripts and unit tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.contracts.services import NoDispatch, Services

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.dispatch import Dispatcher
    from core.model.routing import ModelRouter
    from core.store import Store


def standalone_services(
    settings: Settings, store: Store, *, router: ModelRouter | None = None,
    dispatcher: Dispatcher | None = None,
) -> Services:
    """The configured models, no senders, and no dispatcher (chats wait for the sweeper)."""
    from core.acting.workspaces import Workspaces
    from core.model.routing import SettingsRouter

    return Services(
        router=router or SettingsRouter(settings), dispatcher=dispatcher or NoDispatch(),
        senders={}, workspaces=Workspaces(settings, store),
    )
