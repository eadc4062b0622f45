"""Message vectors computed off the turn's path: a child process at low priority.

After a turn, ``embed_after_turn`` only asks for the session to be indexed (``request``: a
non-blocking put on a bounded queue). A child process (core/search/indexer_child.py), started
on the first request, niced, takes requests in batches and writes the vectors through its own
connection to the same database. The numpy BERT therefore never runs in the process that
serves turns, nor holds its GIL. A request that finds the queue full is dropped: the messages
stay without vectors, which is a state every reader already handles (words search finds them
at once; the next request of the session, a search's bounded backfill or ``iris sessions
reindex`` embeds them).

The runtime owns its ``Indexer`` and closes it (``Runtime.close``). An indexer dropped without
``close`` stops its child when it is garbage-collected, and any left at interpreter exit are
stopped then (``weakref.finalize``); a parent killed outright takes the child with it (see
indexer_child.py). A child that died (killed, crashed) is replaced on the next request, with a
fresh queue: one killed mid-read may have left the old one locked.

Nothing here imports numpy or the encoder in the parent; the child imports them when it runs.
The queue (and multiprocessing's semaphore tracker) is only made on the first request.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import threading
import weakref
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from core.search.indexer_child import STOP, serve

if TYPE_CHECKING:
    from core.config import Settings

log = logging.getLogger("iris.search.indexer")

QUEUE_SIZE = 256  # pending requests; beyond that they are dropped (see above)
STOP_GRACE = 5.0  # seconds a closing child gets to finish its batch before it is killed


class _Launcher:
    """One daemon thread per process that starts the children. The kernel's parent-death
    signal fires when the *thread* that started a child ends, and a request may come from a
    thread that ends long before the process (a loop run in a helper thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Any, Future[None]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def start(self, process: Any) -> None:
        done: Future[None] = Future()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="iris-indexer-launcher", daemon=True
                )
                self._thread.start()
        self._jobs.put((process, done))
        done.result()

    def _run(self) -> None:
        while True:
            process, done = self._jobs.get()
            try:
                process.start()
            except BaseException as exc:  # handed to the caller
                done.set_exception(exc)
            else:
                done.set_result(None)
            del process, done


_LAUNCHER = _Launcher()


def stop_child(process: Any, requests: Any) -> None:
    """Ask the child to stop after its batch; kill it when it has not within ``STOP_GRACE``
    (a stuck or stopped child) or when the queue has no room to ask (its pending requests are
    then dropped, like any beyond the limit); reap it and release the queue."""
    if process.exitcode is None:
        try:
            requests.put_nowait(STOP)
        except (queue.Full, ValueError, OSError):
            pass
        else:
            process.join(STOP_GRACE)
        if process.exitcode is None:
            process.kill()  # SIGKILL: also ends a stopped child
            process.join()
    requests.cancel_join_thread()  # what is still buffered for a dead child is dropped
    requests.close()


class Indexer:
    """The parent's handle on one indexing child for one database."""

    def __init__(self, settings: Settings, *, queue_size: int = QUEUE_SIZE) -> None:
        self._settings = settings
        self._queue_size = queue_size
        self._context = multiprocessing.get_context("spawn")  # no fork of a threaded server
        self._queue: Any = None
        self._process: Any = None
        self._stop: weakref.finalize[Any, Any] | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.dropped = 0
        self.started = 0  # children started: more than one means one died and was replaced

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def closed(self) -> bool:
        return self._closed

    def request(self, user_id: str, session_id: str) -> bool:
        """Ask for the session's messages without vectors to be embedded. Never blocks on
        the child; False when the queue is full (the request is dropped) or the indexer is
        closed."""
        with self._lock:
            if self._closed:
                return False
            if self._process is None or self._process.exitcode is not None:
                self._start()
            requests = self._queue
        try:
            requests.put_nowait((user_id, session_id))
        except queue.Full:
            self.dropped += 1
            log.warning("indexing queue full; %s/%s left for a later request", user_id, session_id)
            return False
        return True

    def _start(self) -> None:
        if self._stop is not None:
            log.warning(
                "indexer process %s ended (exit code %s); starting another",
                self._process.pid,
                self._process.exitcode,
            )
            self._stop()
        self._queue = self._context.Queue(maxsize=self._queue_size)
        self._process = self._context.Process(
            target=serve,
            args=(self._settings, self._queue, os.getpid()),
            name="iris-indexer",
            daemon=True,
        )
        _LAUNCHER.start(self._process)
        self._stop = weakref.finalize(self, stop_child, self._process, self._queue)
        self.started += 1
        log.info("indexer process %d started", self._process.pid)

    def close(self) -> None:
        """Let the child finish its batch and exit (killed after ``STOP_GRACE``); later
        requests are refused. Safe to call more than once."""
        with self._lock:
            self._closed = True
            stop, self._stop = self._stop, None
            self._process = None
        if stop is not None:
            stop()
