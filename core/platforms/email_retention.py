"""How long kept email attachments live: the inbound webhook keeps each one in its owner's
object store (``inbound/email/<digest>/<n>``) and notes when (``store.kept_attachments``); the
sweep deletes those kept more than ``email_attachment_days`` ago on ``store.clock``, owner by
owner, a bounded batch per sweep. The turn copies what it reads (images to ``images/``,
documents to the workspace), so only a rerun of a message that old would miss them."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.store.objects_base import ObjectNotFound, ObjectStoreError

if TYPE_CHECKING:
    from core.store import Store

log = logging.getLogger("iris.email")

DAY_SECONDS = 86_400.0
OWNERS_PER_SWEEP = 50
KEYS_PER_OWNER = 200


def expire_attachments(
    store: Store, days: float, *, owners: int = OWNERS_PER_SWEEP, per_owner: int = KEYS_PER_OWNER
) -> int:
    """Delete the attachments kept more than ``days`` ago (blocking: run it in a worker
    thread). Returns how many are gone. An object already missing counts as gone; one the
    object store would not delete stays noted and is tried again on the next sweep."""
    cutoff = store.clock.now() - days * DAY_SECONDS
    gone = 0
    for user_id in store.kept_attachments.owners_due(cutoff, limit=owners):
        deleted = []
        for key in store.kept_attachments.due(user_id, cutoff, limit=per_owner):
            try:
                store.objects.delete(user_id, key)
            except ObjectNotFound:
                pass
            except ObjectStoreError as exc:
                log.warning("could not delete an expired email attachment of %s: %s",
                            user_id, exc)
                continue
            deleted.append(key)
        store.kept_attachments.forget(user_id, deleted)
        gone += len(deleted)
    return gone
