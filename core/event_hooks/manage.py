"""Creating an event webhook: its target resolved like a cron job's ``deliver``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.scheduler.targets import INBOX, NO_TARGET, latest_chat, resolve_deliver

if TYPE_CHECKING:
    from core.store import Store
    from core.store.event_hooks import EventHook


def create_hook(
    store: Store, user_id: str, name: str, prompt: str, deliver: str | None, *, privileged: bool
) -> EventHook:
    """A new hook for ``user_id``. Without ``deliver``, answers go to the user's latest chat Iris
    can push to, else their inbox. Only the owner or the operator (``privileged``) may deliver to
    a chat the user does not talk to Iris in (``resolve_deliver``)."""
    origin = NO_TARGET if deliver else (latest_chat(store, user_id) or INBOX)
    target = resolve_deliver(store, user_id, deliver, origin=origin, privileged=privileged)
    return store.event_hooks.create(user_id, name, prompt, target.to_dict())


def url_of(base: str | None, hook: EventHook) -> str:
    path = f"/hooks/{hook.id}"
    return f"{base.rstrip('/')}{path}" if base else path
