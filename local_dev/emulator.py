"""``iris dev``: every Iris function in one uvicorn process, with the local dispatcher, a ticker
that runs the sweeper (and cron) every minute, and the embedded model when none is configured."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import SecretStr

from core.config import Settings
from functions.app import create_app
from functions.dispatch import LocalDispatcher
from functions.runtime import Runtime, compose
from local_dev.clikit import default_account
from local_dev.devkey import dev_api_key

if TYPE_CHECKING:
    from fastapi import FastAPI

log = logging.getLogger("iris.dev")

TICK_SECONDS = 60.0


@dataclass
class Emulator:
    runtime: Runtime
    dispatcher: LocalDispatcher
    ticks: int = 0  # ticker runs finished: a test waits for more ticks instead of sleeping

    def app(self, *, tick_seconds: float = TICK_SECONDS) -> FastAPI:
        @asynccontextmanager
        async def lifespan(app: object) -> AsyncIterator[None]:
            ticker = asyncio.create_task(self._ticker(tick_seconds))
            try:
                yield
            finally:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ticker
                # turns still running stay pending (the sweeper resumes them): a stuck one
                # must not hold the shutdown
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.dispatcher.idle(),
                                           self.runtime.settings.shutdown_seconds / 2)

        return create_app(self.runtime, lifespan=lifespan)

    async def tick(self) -> None:
        """Due cron jobs, then the sweeper: the same tick as the cloud's minute cron."""
        from functions.tick import run_tick

        await run_tick(self.runtime)

    async def _ticker(self, seconds: float) -> None:
        while True:
            try:
                await self.tick()
            except Exception:
                log.exception("tick failed")
            self.ticks += 1
            await asyncio.sleep(seconds)


def local_settings(settings: Settings) -> Settings:
    """The emulator's settings: a generated API key when none is configured, and, when no
    owner is, the person at its terminal as owner: ``http:$USER``, the account ``iris chat``
    talks as and ``iris dashboard link`` signs in (one owner for chat, /model and dashboard)."""
    if settings.api_key is None:
        key = dev_api_key(settings.home)
        settings = settings.model_copy(update={"api_key": SecretStr(key)})
    return local_owner(settings)


def local_owner(settings: Settings) -> Settings:
    """With no owner_accounts, the account of the person at the emulator's terminal."""
    if settings.owner_accounts:
        return settings
    return settings.model_copy(update={"owner_accounts": [default_account()]})


def refuse_unisolated(settings: Settings) -> None:
    """Raise ConfigError when local commands would run unisolated for several people or for
    a messaging platform (``core.acting.isolation``): better not to start than to start open."""
    if settings.sandbox_backend != "local":
        return
    from core.acting.isolation import local_isolation
    from core.store import open_store

    store = open_store(settings)
    try:
        local_isolation(settings, store)
    finally:
        store.close()


def build_emulator(settings: Settings) -> Emulator:
    dispatcher = LocalDispatcher()
    return Emulator(runtime=compose(local_settings(settings), dispatcher=dispatcher),
                    dispatcher=dispatcher)
