"""Memory edits made on the dashboard: by entry id, as the user, refused when the store
changed since the page was loaded (the page shows the new state and nothing is lost)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import IrisUsageError, NotFound
from core.memory.book import Limits, MemoryBook, MemoryBusy
from core.memory.models import TARGETS, MemoryOperation, Target, WriteResult
from core.memory.ops import Author, MemoryRefused

if TYPE_CHECKING:
    from core.config import Settings
    from core.store import Store


def _target(name: str) -> Target:
    if name not in TARGETS:
        raise IrisUsageError(f"no memory store {name!r} (memory or user)")
    return name


def change(store: Store, settings: Settings, user_id: str, *, action: str, target: str,
           entry_id: str | None = None, text: str | None = None, version: int | None = None,
           who: str) -> WriteResult:
    """Add, replace (edit) or remove one entry of ``user_id``'s ``target`` store. ``version``:
    the store's version the page showed; a newer one refuses the change."""
    chosen = _target(target)
    old = None
    if action in ("replace", "remove"):
        entries = {e.id: e for e in store.memory.entries(user_id, chosen)}
        if entry_id not in entries:
            raise NotFound("that memory entry no longer exists; reload the page")
        old = entries[entry_id].content
    elif action != "add":
        raise IrisUsageError(f"unknown memory action {action!r}")
    try:
        operation = MemoryOperation(action=action, target=chosen,  # type: ignore[arg-type]
                                    content=text if action != "remove" else None, old_text=old)
    except ValueError as exc:
        raise IrisUsageError(str(exc).splitlines()[-1]) from None
    expect = None
    if version is not None:
        expect = store.memory.versions(user_id)
        expect[chosen] = version
    try:
        return MemoryBook(store).write(
            user_id, [operation], limits=Limits.from_settings(settings),
            author=Author(provenance="user", who=who), expect=expect,
        )
    except (MemoryRefused, MemoryBusy) as exc:
        raise IrisUsageError(str(exc)) from None
