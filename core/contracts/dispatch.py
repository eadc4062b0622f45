"""Dispatch: make sure a worker drains a chat. Emulator: an asyncio task; Modal: ``.spawn()``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class ChatRef:
    user_id: str
    chat_key: str


class Dispatcher(Protocol):
    async def drain(self, chat: ChatRef) -> None:
        """Return quickly; the chat's inbox is drained elsewhere (task, container)."""


class Notifier:
    """In-process signals that an inbox entry finished, so a waiting HTTP request wakes at once.
    Waiters also poll the store, because on Modal the worker runs in another container."""

    def __init__(self) -> None:
        self._events: dict[int, asyncio.Event] = {}
        self._watchers: dict[int, int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, entry_id: int) -> asyncio.Event:
        self._loop = asyncio.get_running_loop()
        self._watchers[entry_id] = self._watchers.get(entry_id, 0) + 1
        return self._events.setdefault(entry_id, asyncio.Event())

    def forget(self, entry_id: int) -> None:
        left = self._watchers.get(entry_id, 1) - 1
        if left > 0:
            self._watchers[entry_id] = left
            return
        self._watchers.pop(entry_id, None)
        self._events.pop(entry_id, None)

    def notify(self, entry_id: int) -> None:
        event = self._events.get(entry_id)
        if event is None or self._loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            event.set()
        else:
            self._loop.call_soon_threadsafe(event.set)
