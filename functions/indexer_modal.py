"""Indexing in the cloud: the worker hands sessions to the deployed app's ``Indexer`` function
(``infra/modal_app.py``), a container of its own, so the encoder and numpy never share the
worker's memory, GIL or cores (issue 30: a worker container stays within its memory budget).

The same interface as the local indexing child (``core.search.indexer.SessionIndexer``):
``request`` is a non-blocking put on a bounded queue; a thread takes the requests in batches
(duplicates coalesced) and ``.spawn()``s one ``Indexer.index`` call per batch. A request that
finds the queue full, or a batch whose spawn keeps failing, is dropped and logged: those
messages stay without vectors, a state every reader handles (words search finds them; the
session's next request, a search's bounded backfill or ``iris sessions reindex`` embeds them).
``modal`` is imported on the first spawn, never on the webhook ack path.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from typing import Any

from functions.modal_spawn import ModalSpawner

log = logging.getLogger("iris.search.indexer")

INDEXER_CLASS = "Indexer"
INDEXER_METHOD = "index"
QUEUE_SIZE = 256
BATCH_REQUESTS = 64  # sessions per spawned call
ATTEMPTS = 3
STOP_GRACE = 5.0  # seconds close() waits for the thread to hand over what is queued
_STOP = None


class ModalIndexer:
    def __init__(self, app_name: str, *, sdk: Any = None, queue_size: int = QUEUE_SIZE,
                 backoff: float = 0.2) -> None:
        """``app_name``: the deployed Modal app; ``sdk``: the ``modal`` module or an object
        offering ``Cls.from_name`` and ``exception`` (tests)."""
        self.app_name = app_name
        self._spawner = ModalSpawner(app_name, INDEXER_CLASS, INDEXER_METHOD, sdk=sdk,
                                     attempts=ATTEMPTS, backoff=backoff)
        self._queue: queue.Queue[tuple[str, str] | None] = queue.Queue(maxsize=queue_size)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.dropped = 0  # requests dropped: queue full, or their spawn failed
        self.spawned = 0  # calls spawned

    def request(self, user_id: str, session_id: str) -> bool:
        """Ask for the session to be indexed; never blocks. False when refused (closed, or the
        queue is full)."""
        with self._lock:
            if self._closed:
                return False
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="iris-index-spawner",
                                                daemon=True)
                self._thread.start()
        try:
            self._queue.put_nowait((user_id, session_id))
        except queue.Full:
            self.dropped += 1
            log.warning("indexing queue full; %s/%s left for a later request", user_id,
                        session_id)
            return False
        return True

    def close(self) -> None:
        """Hand over what is queued (up to ``STOP_GRACE`` seconds), then stop. Safe to call
        more than once; later requests are refused."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is None:
            return
        try:
            self._queue.put(_STOP, timeout=STOP_GRACE)
        except queue.Full:
            return
        thread.join(STOP_GRACE)

    def _run(self) -> None:
        stop = False
        while not stop:
            first = self._queue.get()
            batch: set[tuple[str, str]] = set()
            if first is _STOP:
                stop = True
            else:
                batch.add(first)
            while not stop and len(batch) < BATCH_REQUESTS:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                else:
                    batch.add(item)
            if batch:
                try:
                    asyncio.run(self._spawn(sorted(batch)))
                except Exception:  # the thread must outlive any one batch
                    self.dropped += len(batch)
                    log.exception("indexing of %d sessions not spawned", len(batch))

    @property
    def sdk(self) -> Any:
        return self._spawner.sdk

    @sdk.setter
    def sdk(self, value: Any) -> None:
        self._spawner.sdk = value

    async def _spawn(self, batch: list[tuple[str, str]]) -> None:
        done = await self._spawner.spawn([list(pair) for pair in batch],
                                         what=f"indexing of {len(batch)} sessions")
        if done.outcome == "spawned":
            self.spawned += 1
            return
        if done.outcome == "missing":
            log.error("no %s.%s in Modal app %r (%s): is it deployed? `iris deploy` "
                      "deploys it; %d sessions left without vectors", INDEXER_CLASS,
                      INDEXER_METHOD, self.app_name, done.error, len(batch))
        else:
            log.error("could not spawn indexing of %d sessions after %d attempts (%s)",
                      len(batch), done.attempts, done.error)
        self.dropped += len(batch)
