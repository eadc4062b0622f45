"""One skill import per user at a time, across processes (the dashboard, the CLI, a Hermes
migration): a lease named for the user, taken before an import starts and let go when it ends.
A process that dies mid-import lets it expire after ``ttl``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.ids import new_id

if TYPE_CHECKING:
    from core.store import Store

BUSY = ("another skill import of yours is running; wait for it to finish (one import at a "
        "time per user)")


def slot_name(user_id: str) -> str:
    return f"skill-import:{user_id}"


@contextmanager
def import_slot(store: Store, user_id: str, ttl: float) -> Iterator[None]:
    """Hold ``user_id``'s import slot; IrisUsageError when another import holds it."""
    owner = new_id("imp")
    name = slot_name(user_id)
    if not store.leases.acquire(name, user_id, owner, ttl):
        raise IrisUsageError(BUSY)
    try:
        yield
    finally:
        store.leases.release(name, owner)
