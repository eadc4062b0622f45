"""Watching for ``/stop`` while a sandbox command runs, so the command ends at once.

A ``/stop`` is recorded in the database (``store.cancels``) and the turn itself ends after the
step it is on; a long step (a ``terminal`` command, an ``execute_code`` script) would otherwise
keep it waiting until the command's time limit. ``watch_for_stop`` looks for the request every
``STOP_POLL`` seconds (the read runs off the event loop) and sets the event it yields, which a
sandbox's ``exec(..., stop=event)`` takes as the order to kill the command where it runs
(locally, in Modal or in Daytona) and return what it printed so far. A held command run by
``/approve N`` is watched the same way, in the turn of the ``/approve`` message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from core.lanes import blocking

if TYPE_CHECKING:
    from core.store import Store
    from sandboxes.base import ExecResult

log = logging.getLogger("iris.acting")

STOP_POLL = 1.0


class InTurn(Protocol):
    """Where a step runs: a tool's ``ToolContext``, or a slash command's ``CommandContext``
    (``/approve N`` runs a held command inside the turn of its own inbox entry)."""

    @property
    def store(self) -> Store: ...
    @property
    def user_id(self) -> str: ...
    @property
    def inbox_id(self) -> int | None: ...


def stop_requested(ctx: InTurn) -> bool:
    """Whether a /stop is recorded for the turn ``ctx`` runs in (a database read)."""
    return ctx.inbox_id is not None and ctx.store.cancels.requested(ctx.user_id, ctx.inbox_id)


def noted_if_stopped(result: ExecResult, what: str) -> ExecResult:
    """``result``, saying so in its note when a /stop ended the ``what`` (command, script)."""
    if not result.stopped:
        return result
    return replace(result, note=f"stopped with /stop: the {what} was ended in the sandbox; the "
                   "output is what it printed until then")


@contextlib.asynccontextmanager
async def watch_for_stop(ctx: InTurn, what: str) -> AsyncIterator[asyncio.Event]:
    """An event set once a /stop is recorded for ``ctx``'s turn, looked for while the block
    runs. ``what`` names the step in the log. A turn with no inbox entry is never watched."""
    stop = asyncio.Event()
    if ctx.inbox_id is None:
        yield stop
        return
    watcher = asyncio.create_task(_watch(ctx, stop, what))
    try:
        yield stop
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def _watch(ctx: InTurn, stop: asyncio.Event, what: str) -> None:
    while True:
        try:
            if await blocking("checks", ctx.user_id, stop_requested, ctx,  # a database read
                              what="looking for /stop"):
                stop.set()
                return
        except Exception:
            log.warning("%s: could not look for /stop", what, exc_info=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), STOP_POLL)
