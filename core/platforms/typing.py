"""A "typing…" indicator kept alive while a turn runs, on platforms whose sender has one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

log = logging.getLogger("iris.typing")

EVERY_SECONDS = 4.0  # Telegram shows the indicator for 5 s


@asynccontextmanager
async def typing_while(
    senders: Mapping[str, Any], platform: str, target: dict[str, Any] | None,
    *, every: float = EVERY_SECONDS,
) -> AsyncIterator[None]:
    sender = senders.get(platform)
    show = getattr(sender, "typing", None)
    if show is None or target is None:
        yield
        return

    async def keep() -> None:
        while True:
            try:
                await show(target)
            except Exception as exc:  # an indicator is never worth failing a turn for
                log.debug("typing indicator failed: %s", exc)
            await asyncio.sleep(every)

    task = asyncio.create_task(keep())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
