"""Interactive first: on one shared model (the embedded demo, a local server), a person's chat
turn is not queued behind scheduled runs.

While any interactive chat is being drained (its turns running or queued behind each other), a
scheduled turn waits before each of its model calls; a scheduled call already in flight
finishes, so a chat turn waits at most for one of them. A job with a model of its own (not the
shared main model) never waits. In-process: the emulator runs every turn in one process; in the
cloud, where each model call goes to a provider, the setting stays off.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from core.messages import Message
from core.model.llm import Model, ModelResponse, ToolSpec


@dataclass
class InteractiveFirst:
    active: int = 0  # interactive chats being drained
    waiting: int = 0  # scheduled model calls waiting for them
    _idle: asyncio.Event = field(default_factory=asyncio.Event)
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    def __post_init__(self) -> None:
        self._idle.set()

    @asynccontextmanager
    async def interactive(self) -> AsyncIterator[None]:
        """Hold scheduled model calls back while an interactive chat is drained."""
        self.active += 1
        self._idle.clear()
        try:
            yield
        finally:
            self.active -= 1
            if self.active == 0:
                self._idle.set()

    async def clear_for_background(self) -> None:
        """Return once no interactive chat is being drained."""
        if self.active == 0:
            return
        self.waiting += 1
        async with self._changed:
            self._changed.notify_all()
        try:
            while self.active:
                await self._idle.wait()
        finally:
            self.waiting -= 1

    async def wait_until_waiting(self, count: int = 1) -> None:
        """Return once ``count`` scheduled calls wait (for tests and benchmarks: no sleeps)."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.waiting >= count)


@dataclass
class Yielding:
    """A model whose calls first give way to interactive turns (a scheduled turn's model)."""

    model: Model
    priority: InteractiveFirst
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.model.name

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()
    ) -> ModelResponse:
        await self.priority.clear_for_background()
        return await self.model.complete(messages, tools)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.model, attribute)
