"""The emulator's dispatcher: drain a chat in an asyncio task of this process."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from core.contracts.dispatch import ChatRef

log = logging.getLogger("iris.dispatch")


class LocalDispatcher:
    """Bound to its runtime by the composition root (``functions.runtime.compose``)."""

    def __init__(self) -> None:
        self.runtime: Any = None
        self._tasks: set[asyncio.Task[int]] = set()

    def bind(self, runtime: Any) -> None:
        self.runtime = runtime

    async def drain(self, chat: ChatRef) -> None:
        from functions.worker import drain

        if self.runtime is None:
            raise RuntimeError("LocalDispatcher used before bind(runtime)")
        task = asyncio.create_task(drain(self.runtime, chat), name=f"drain {chat.chat_key}")
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[int]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("drain task failed", exc_info=task.exception())

    @property
    def running(self) -> int:
        """How many drain tasks (turns, then their after-turn hooks) have not ended."""
        return len(self._tasks)

    async def idle(self) -> None:
        """Wait until no drain task of this event loop is running (tests, benchmarks,
        shutdown); tasks another loop runs (a server thread's) are that loop's to wait for."""
        loop = asyncio.get_running_loop()
        while mine := [task for task in list(self._tasks) if task.get_loop() is loop]:
            await asyncio.gather(*mine, return_exceptions=True)
