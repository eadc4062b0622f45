"""The answer as it is produced: text deltas of a turn's model steps, passed from the model call
to whoever waits for that turn in this process (the HTTP API's SSE response, the dashboard).

The turn sets an ``AnswerSink`` around each model call (``streaming_to``); ``LiteLLMModel``
streams when one is set and hands it every text delta, and ``reset()`` when a step that had
begun in words turns into tool calls (those words were not the answer). ``AnswerFeeds`` keeps
each running turn's deltas in memory, so a listener that arrives late still gets them all.
Across containers (a Modal worker) the same ``Answers`` interface is served by a relay
(``functions/answer_relay_modal.py``); whatever a relay loses, the waiter completes with the
stored answer (``StreamedText``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal, Protocol

MAX_FEED_CHARS = 1_000_000  # past this a feed stops buffering; the waiter sends the rest whole


class AnswerSink(Protocol):
    def text(self, delta: str) -> None: ...

    def reset(self) -> None: ...


_sink: ContextVar[AnswerSink | None] = ContextVar("iris_answer_sink", default=None)


def answer_sink() -> AnswerSink | None:
    """The sink of the model call running now, if its turn streams."""
    return _sink.get()


@contextmanager
def streaming_to(sink: AnswerSink | None) -> Iterator[None]:
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


@dataclass(frozen=True)
class FeedEvent:
    kind: Literal["text", "reset"]
    text: str = ""


@dataclass(eq=False)
class Feed:
    """One turn's events. Listeners read with their own cursor."""

    events: list[FeedEvent] = field(default_factory=list)
    chars: int = 0
    published: bool = False
    closed: bool = False
    listeners: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, event: FeedEvent) -> None:
        if self.chars + len(event.text) > MAX_FEED_CHARS:
            return
        self.chars += len(event.text)
        self.events.append(event)
        self.changed.set()


class AnswerListener(Protocol):
    def take(self) -> list[FeedEvent]: ...

    async def wait(self) -> None: ...

    def close(self) -> None: ...


class Answers(Protocol):
    """Where a turn's answer goes as it is produced and where its waiter reads it, by the
    entry's user and id: in this process (``AnswerFeeds``) or relayed across containers."""

    def sink(self, user_id: str, entry_id: int) -> AnswerSink: ...

    async def end(self, user_id: str, entry_id: int) -> None: ...

    def listen(self, user_id: str, entry_id: int) -> AnswerListener: ...


_Key = tuple[str, int]


class Listener:
    def __init__(self, feeds: AnswerFeeds, key: _Key, feed: Feed) -> None:
        self._feeds, self.key, self._feed, self._seen = feeds, key, feed, 0

    def take(self) -> list[FeedEvent]:
        """Events not read yet."""
        new = self._feed.events[self._seen:]
        self._seen += len(new)
        if self._seen >= len(self._feed.events):
            self._feed.changed.clear()
        return new

    async def wait(self) -> None:
        """Until there is something to ``take``."""
        if self._seen < len(self._feed.events):
            return
        await self._feed.changed.wait()

    def close(self) -> None:
        self._feeds.leave(self.key, self._feed)


class _FeedSink:
    def __init__(self, feed: Feed) -> None:
        self._feed = feed

    def text(self, delta: str) -> None:
        if delta:
            self._feed.add(FeedEvent("text", delta))

    def reset(self) -> None:
        self._feed.add(FeedEvent("reset"))


class AnswerFeeds:
    """In-process feeds of running turns, by user and inbox entry id (one event loop)."""

    def __init__(self) -> None:
        self._feeds: dict[_Key, Feed] = {}

    def _feed(self, key: _Key) -> Feed:
        return self._feeds.setdefault(key, Feed())

    def sink(self, user_id: str, entry_id: int) -> AnswerSink:
        """For the turn of ``entry_id``; call ``end`` when it is over."""
        feed = self._feed((user_id, entry_id))
        feed.published = True
        return _FeedSink(feed)

    async def end(self, user_id: str, entry_id: int) -> None:
        feed = self._feeds.pop((user_id, entry_id), None)
        if feed is not None:
            feed.closed = True
            feed.changed.set()

    def listen(self, user_id: str, entry_id: int) -> Listener:
        key = (user_id, entry_id)
        feed = self._feed(key)
        feed.listeners += 1
        return Listener(self, key, feed)

    def leave(self, key: _Key, feed: Feed) -> None:
        feed.listeners -= 1
        # A feed nobody ever wrote to (the turn ended before, or runs elsewhere) is dropped
        # with its last listener; one being written to is dropped by ``end``.
        if feed.listeners <= 0 and not feed.published and self._feeds.get(key) is feed:
            del self._feeds[key]

    def __len__(self) -> int:
        return len(self._feeds)


class StreamedText:
    """What a listener has sent so far, so that the final answer completes it exactly: a step
    that turned into tool calls stays sent (it cannot be taken back) and is set apart from
    what follows by a blank line."""

    def __init__(self) -> None:
        self._step = ""
        self._sent = False
        self._apart = False

    def add(self, event: FeedEvent) -> str:
        if event.kind == "reset":
            if self._step:
                self._apart, self._step = True, ""
            return ""
        piece = event.text
        if self._apart and not self._step:
            piece = "\n\n" + piece
            self._apart = False
        self._step += event.text
        self._sent = True
        return piece

    def rest(self, reply: str) -> str:
        """The text still to send for the whole answer to be ``reply``. What was streamed may
        differ from the stored answer in white space alone (the final cleaning trims it and
        closes up blank lines left by a printed tool call): that counts as the same text."""
        after = _after(reply, self._step)
        if after is not None:
            rest = reply[after:]
            if rest and not self._step and self._sent:
                rest = "\n\n" + rest
            return rest
        return ("\n\n" if self._sent else "") + reply


def _after(reply: str, sent: str) -> int | None:
    """Where ``reply`` goes on after ``sent``, white space not counted; None if ``sent`` is
    not how ``reply`` begins."""
    if reply.startswith(sent):
        return len(sent)
    at = 0
    for char in sent:
        if char.isspace():
            continue
        while at < len(reply) and reply[at].isspace():
            at += 1
        if at >= len(reply) or reply[at] != char:
            return None
        at += 1
    return at
