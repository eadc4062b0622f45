"""Spawning a method of a class in the deployed Modal app (``Worker.drain``, ``Indexer.index``):
the class looked up on first use and again after any failure, transient errors retried with
exponential backoff, a missing app or class reported at once. ``modal`` is imported on the first
spawn, never on import (the webhook ack path stays light). The callers say what a failure means
for them; this never raises for Modal's errors."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Literal

log = logging.getLogger("iris.dispatch")


@dataclass(frozen=True)
class Spawned:
    """How a spawn ended: ``spawned``; ``missing`` (the app or class is not deployed); or
    ``failed`` after every attempt. ``error`` is the last exception, ``attempts`` how many."""

    outcome: Literal["spawned", "missing", "failed"]
    attempts: int
    error: BaseException | None = None


class ModalSpawner:
    def __init__(self, app_name: str, class_name: str, method: str, *, sdk: Any = None,
                 attempts: int = 3, backoff: float = 0.2) -> None:
        """``sdk``: the ``modal`` module (imported on first use when None) or an object offering
        ``Cls.from_name`` and ``exception``."""
        self.app_name = app_name
        self.class_name = class_name
        self.method = method
        self.sdk = sdk
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self._handle: Any = None

    def modal(self) -> Any:
        if self.sdk is None:
            import modal

            self.sdk = modal
        return self.sdk

    async def spawn(self, *args: Any, what: str) -> Spawned:
        """``Cls().method.spawn(*args)``; ``what`` names the work in the retry warnings."""
        modal = self.modal()
        for attempt in range(1, self.attempts + 1):
            try:
                if self._handle is None:
                    self._handle = modal.Cls.from_name(self.app_name, self.class_name)()
                await getattr(self._handle, self.method).spawn.aio(*args)
                return Spawned("spawned", attempt)
            except modal.exception.NotFoundError as exc:
                self._handle = None
                return Spawned("missing", attempt, exc)
            except (modal.exception.Error, OSError, TimeoutError) as exc:
                self._handle = None
                if attempt == self.attempts:
                    return Spawned("failed", attempt, exc)
                log.warning("spawn for %s failed (%s); retrying", what, exc)
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
        raise AssertionError("unreachable: the last attempt returns")
