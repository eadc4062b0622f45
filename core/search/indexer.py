"""Message vectors computed off the turn's path: a child process at low priority.

After a turn, ``embed_after_turn`` only asks for the session to be indexed (``request``: a
non-blocking put on a bounded queue). A child process, started on the first request, niced,
takes requests in batches (one backfill per distinct user and session of the batch) and writes
the vectors through its own connection to the same database. The numpy BERT therefore never
runs in the process that serves turns, nor holds its GIL. A request that finds the queue full
is dropped: the messages stay without vectors, which is a state every reader already handles
(words search finds them at once; the next request of the session, a search's bounded backfill
or ``iris sessions reindex`` embeds them).

Nothing here imports numpy or the encoder in the parent; the child imports them when it runs.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.config import Settings

log = logging.getLogger("iris.search.indexer")

QUEUE_SIZE = 256  # pending requests; beyond that they are dropped (see above)
BATCH_REQUESTS = 64  # requests coalesced into one round of backfills
SESSION_LIMIT = 64  # messages of a session embedded per request, newest first
NICENESS = 10  # added to the child's nice value
PARENT_CHECK = 2.0  # seconds between checks that the parent is still alive

Request = tuple[str, str]  # (user_id, session_id)


class Indexer:
    """The parent's handle on one indexing child for one database."""

    def __init__(self, settings: Settings, *, queue_size: int = QUEUE_SIZE) -> None:
        self._settings = settings
        self._context = multiprocessing.get_context("spawn")  # no fork of a threaded server
        self._queue: Any = self._context.Queue(maxsize=queue_size)
        self._process: Any = None
        self._lock = threading.Lock()
        self.dropped = 0

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def request(self, user_id: str, session_id: str) -> bool:
        """Ask for the session's messages without vectors to be embedded. Never blocks; False
        when the queue is full (the request is dropped) or the indexer is closed."""
        with self._lock:
            if self._process is None:
                self._process = self._context.Process(
                    target=serve,
                    args=(self._settings, self._queue, os.getpid()),
                    name="iris-indexer",
                    daemon=True,
                )
                self._process.start()
                log.info("indexer process %d started", self._process.pid)
            elif self._process.exitcode is not None:
                return False
        try:
            self._queue.put_nowait((user_id, session_id))
        except queue.Full:
            self.dropped += 1
            log.warning("indexing queue full; %s/%s left for a later request", user_id, session_id)
            return False
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Let the child finish what it holds and exit; stop it when it does not in time."""
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        try:
            self._queue.put((None, None), timeout=timeout)
        except queue.Full:
            process.terminate()
        process.join(timeout)
        if process.exitcode is None:
            process.terminate()
            process.join(timeout)
        self._queue.close()


_shared: dict[str, Indexer] = {}
_shared_lock = threading.Lock()


def shared(settings: Settings) -> Indexer:
    """This process's indexer for ``settings``' database (one child per database)."""
    with _shared_lock:
        found = _shared.get(settings.db_url)
        if found is None:
            found = _shared[settings.db_url] = Indexer(settings)
        return found


def close_all() -> None:
    with _shared_lock:
        indexers = list(_shared.values())
        _shared.clear()
    for indexer in indexers:
        indexer.close()


def _take_batch(source: Any, parent: int) -> tuple[set[Request], bool]:
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
    stop = (None, None) in batch
    batch.discard((None, None))
    return batch, stop


def serve(settings: Settings, source: Any, parent: int) -> None:
    """The child: embed requested sessions until told to stop or the parent is gone."""
    os.nice(NICENESS)
    from core.search import embed
    from core.store import open_store

    store = open_store(settings)
    try:
        stop = False
        while not stop:
            batch, stop = _take_batch(source, parent)
            if not batch or not embed.available():
                continue
            for user_id, session_id in sorted(batch):
                try:
                    written = embed.backfill(
                        store, user_id, session_id=session_id, limit=SESSION_LIMIT
                    )
                    log.debug("embedded %d messages of %s", written, session_id)
                except Exception:
                    log.exception("indexing session %s of %s failed", session_id, user_id)
    finally:
        store.close()
