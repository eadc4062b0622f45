"""The answer as it is produced, relayed from a Modal ``Worker`` container to the ``Web``
container that holds the waiting SSE response, through one named ``modal.Queue``.

Each streaming turn writes to its own partition (a hash of the user id and the inbox entry id,
so a reader can only find an entry of the user it is authenticated as). The worker batches the
text deltas: one Queue item per ``FLUSH_SECONDS`` at most, then an end marker. The web side
reads with a timeout; whatever the relay loses or delivers late, ``stream_events`` completes the
answer with the stored reply (``core.model.streaming.StreamedText``), so it is never lost nor
doubled.
``modal`` is imported on first use, not on import: the webhook ack path stays light.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import queue as stdlib_queue
from collections.abc import Callable
from typing import Any

from core.model.streaming import MAX_FEED_CHARS, AnswerSink, FeedEvent

log = logging.getLogger("iris.streaming")

FLUSH_SECONDS = 0.075  # deltas gathered into one Queue item
READ_SECONDS = 20.0  # one blocking read; the reader reads again until closed or ended
END_SECONDS = 5.0  # the last flush a turn waits for before it commits
PARTITION_TTL = 900  # seconds a partition nobody read is kept after its last put
READ_BATCH = 100  # items taken per read
END = "end"


def partition_for(user_id: str, entry_id: int) -> str:
    """A partition key (non-empty, at most 64 bytes) for one user's entry."""
    return hashlib.sha256(f"{user_id}\0{entry_id}".encode()).hexdigest()[:48]


class _RelaySink:
    """Gathers deltas and puts them, ``FLUSH_SECONDS`` apart at most, in one background task."""

    def __init__(self, relay: ModalAnswerRelay, partition: str) -> None:
        self._relay, self._partition = relay, partition
        self._pending: list[tuple[str, str]] = []
        self._chars = 0
        self._closed = False
        self._wake = asyncio.Event()
        self._ending = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._run(), name="answer relay")

    def text(self, delta: str) -> None:
        if delta and self._chars + len(delta) <= MAX_FEED_CHARS:
            self._chars += len(delta)
            self._add("text", delta)

    def reset(self) -> None:
        self._add("reset", "")

    def _add(self, kind: str, text: str) -> None:
        if self._pending and kind == "text" and self._pending[-1][0] == "text":
            self._pending[-1] = ("text", self._pending[-1][1] + text)
        else:
            self._pending.append((kind, text))
        self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._ending.set()
        self._wake.set()

    async def _run(self) -> None:
        try:
            queue = self._relay.queue()
            while True:
                await self._wake.wait()
                if not self._closed:  # gather more, unless the turn ends meanwhile
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._ending.wait(), FLUSH_SECONDS)
                self._wake.clear()
                batch, self._pending = self._pending, []
                if self._closed:
                    batch.append((END, ""))
                if batch:
                    await queue.put.aio(batch, partition=self._partition,
                                        partition_ttl=PARTITION_TTL)
                if self._closed:
                    return
        except Exception as exc:  # the waiter still gets the stored answer
            log.warning("answer relay stopped: %s: %s", type(exc).__name__, exc)


class _RelayListener:
    """Reads one partition in a background task until the end marker or ``close``."""

    def __init__(self, relay: ModalAnswerRelay, partition: str) -> None:
        self._relay, self._partition = relay, partition
        self._events: list[FeedEvent] = []
        self._seen = 0
        self._changed = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._read(), name="answer reader")

    def take(self) -> list[FeedEvent]:
        new = self._events[self._seen:]
        self._seen += len(new)
        self._changed.clear()
        return new

    async def wait(self) -> None:
        if self._seen < len(self._events):
            return
        await self._changed.wait()

    def close(self) -> None:
        self._task.cancel()

    async def _read(self) -> None:
        try:
            queue = self._relay.queue()
            while True:
                try:
                    items = await queue.get_many.aio(READ_BATCH, timeout=READ_SECONDS,
                                                     partition=self._partition)
                except stdlib_queue.Empty:
                    continue
                for batch in items:
                    for kind, text in batch:
                        if kind == END:
                            return
                        if kind in ("text", "reset"):
                            self._events.append(FeedEvent(kind, str(text)))
                        self._changed.set()
        except Exception as exc:  # the waiter still gets the stored answer
            log.warning("answer relay read stopped: %s: %s", type(exc).__name__, exc)


class ModalAnswerRelay:
    """``core.model.streaming.Answers`` across containers, over the named Queue ``queue_name``."""

    def __init__(self, queue_name: str, sdk: Callable[[], Any]) -> None:
        """``sdk`` returns the ``modal`` module (or a fake offering ``Queue.from_name``)."""
        self.queue_name = queue_name
        self._sdk = sdk
        self._queue: Any = None
        self._sinks: dict[tuple[str, int], _RelaySink] = {}

    def queue(self) -> Any:
        if self._queue is None:
            self._queue = self._sdk().Queue.from_name(self.queue_name, create_if_missing=True)
        return self._queue

    def sink(self, user_id: str, entry_id: int) -> AnswerSink:
        sink = _RelaySink(self, partition_for(user_id, entry_id))
        self._sinks[(user_id, entry_id)] = sink
        return sink

    async def end(self, user_id: str, entry_id: int) -> None:
        sink = self._sinks.pop((user_id, entry_id), None)
        if sink is None:
            return
        sink.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(sink.task), END_SECONDS)

    def listen(self, user_id: str, entry_id: int) -> _RelayListener:
        return _RelayListener(self, partition_for(user_id, entry_id))

    def __len__(self) -> int:
        return len(self._sinks)
