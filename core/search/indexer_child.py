"""The indexing child's side (started by core/search/indexer.py): embed requested sessions at
low priority until told to stop, and never outlive the process that started it.

It dies with its parent however the parent ends: on Linux the kernel sends it SIGKILL when the
thread that started it (the parent's launcher thread, alive as long as the parent) ends
(``PR_SET_PDEATHSIG``), which works even while the child is stuck or stopped; elsewhere, and
as a second guard, it checks between requests that its parent is still the one that started
it. It holds nothing that needs clean-up: every write is a transaction of the database.
"""

from __future__ import annotations

import ctypes
import logging
import os
import queue
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from core.config import Settings
    from core.store import Store

log = logging.getLogger("iris.search.indexer")

BATCH_REQUESTS = 64  # requests coalesced into one round of backfills
SESSION_LIMIT = 64  # messages of a session embedded per request, newest first
NICENESS = 10  # added to the child's nice value
PARENT_CHECK = 2.0  # seconds between checks that the parent is still alive
PR_SET_PDEATHSIG = 1

Request = tuple[str, str]  # (user_id, session_id)
STOP: tuple[None, None] = (None, None)


def die_with_parent(parent: int) -> None:
    """Ask the kernel for SIGKILL when the parent goes (Linux), and leave at once when it is
    already gone (it may have died before the request was made)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            log.warning("no parent-death signal; relying on the parent checks")
    if os.getppid() != parent:
        os._exit(0)


def take_batch(source: Any, parent: int) -> tuple[set[Request], bool]:
    """The next requests (waiting for the first) and whether to stop after them (asked to,
    or the parent is gone)."""
    while True:
        try:
            first = source.get(timeout=PARENT_CHECK)
            break
        except queue.Empty:
            if os.getppid() != parent:
                return set(), True
    batch = {first}
    while len(batch) < BATCH_REQUESTS:
        try:
            batch.add(source.get_nowait())
        except queue.Empty:
            break
    stop = STOP in batch
    batch.discard(STOP)
    return batch, stop


def serve(settings: Settings, source: Any, parent: int) -> None:
    """The child: embed requested sessions until told to stop or the parent is gone."""
    die_with_parent(parent)
    os.nice(NICENESS)
    from core.search import embed
    from core.store import open_store

    store = open_store(settings)
    try:
        stop = False
        while not stop:
            batch, stop = take_batch(source, parent)
            if batch and embed.available():
                index_requests(store, batch)
    finally:
        store.close()


def index_requests(store: Store, batch: Iterable[Request]) -> int:
    """Embed each requested session's messages without vectors (up to ``SESSION_LIMIT`` each,
    newest first), one session after another; a failing session is logged and skipped.
    Returns how many messages got vectors. Also the cloud's ``Indexer`` function's body."""
    from core.search import embed

    written = 0
    for user_id, session_id in sorted(set(batch)):
        try:
            done = embed.backfill(store, user_id, session_id=session_id, limit=SESSION_LIMIT)
            log.debug("embedded %d messages of %s", done, session_id)
            written += done
        except Exception:
            log.exception("indexing session %s of %s failed", session_id, user_id)
    return written
