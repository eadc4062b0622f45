"""Each user's sandbox, opened on demand and shared by every turn of that user in this process.

Tools reach it as ``ctx.services.workspaces`` and ``async with workspaces.use(user_id) as box``.
A sandbox used by a turn is hibernated after the turn (``hibernate_after_turn``) when the
backend needs it: Modal ends idle sandboxes without a snapshot, so the snapshot is taken while
the turn's work is fresh; Daytona keeps its disk and stops itself after the idle interval; the
local backend has nothing to hibernate.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.hooks import HookContext
    from core.store import Store
    from sandboxes import Sandbox, SandboxOptions

log = logging.getLogger("iris.acting")

MAX_OPEN = 256

Opener = Callable[[str], "Sandbox"]


def sandbox_options(settings: Settings, store: Store | None = None) -> SandboxOptions:
    from core.acting.isolation import local_isolation
    from sandboxes import SandboxOptions

    image: Any = None
    if settings.sandbox_backend == "modal" and settings.sandbox_image:
        import modal

        image = modal.Image.from_registry(settings.sandbox_image)
    return SandboxOptions(
        output_limit=settings.max_tool_output_chars,
        default_timeout=settings.sandbox_timeout,
        modal_app_name=settings.sandbox_modal_app,
        modal_image=image,
        modal_idle_timeout=settings.sandbox_idle_minutes * 60,
        daytona_api_key=settings.secret("daytona_api_key"),
        daytona_api_url=settings.daytona_api_url,
        daytona_target=settings.daytona_target,
        daytona_image=settings.sandbox_image,
        daytona_snapshot=settings.daytona_snapshot,
        daytona_auto_stop_interval=settings.sandbox_idle_minutes,
        local_isolation=(local_isolation(settings, store)
                         if settings.sandbox_backend == "local" else "none"),
        local_network=settings.sandbox_network,
    )


def fresh_start_notice(reason: str) -> str:
    """What the model is told (and must tell the user) when a workspace had to start empty."""
    return (
        f"Your workspace could not be restored: {reason}. It starts empty now; earlier files "
        "are gone. Tell the user this plainly. Nothing was run or changed by this call; repeat "
        "it if it is still needed."
    )


def hibernates_after_turn(settings: Settings) -> bool:
    if settings.sandbox_hibernate_after_turn is not None:
        return settings.sandbox_hibernate_after_turn
    return settings.sandbox_backend == "modal"


class Workspaces:
    """Sandboxes by user id; counts operations in flight so a hibernate never cuts one off."""

    def __init__(self, settings: Settings, store: Store, *, opener: Opener | None = None):
        self.settings = settings
        self.state = store.sandbox_states
        self._store = store
        self.hibernate_after_turn = hibernates_after_turn(settings)
        self._opener = opener or self._open
        self._open_boxes: OrderedDict[str, Sandbox] = OrderedDict()
        self._in_flight: dict[str, int] = {}
        self._used: set[str] = set()
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._options: SandboxOptions | None = None

    def _open(self, user_id: str) -> Sandbox:
        from core.errors import ConfigError
        from sandboxes import SandboxError, open_sandbox

        if self.settings.dispatcher == "modal" and self.settings.sandbox_backend == "local":
            raise SandboxError(
                "the workspace is not available: in the cloud commands run only in a Modal or "
                "Daytona sandbox, and sandbox_backend is 'local'. Tell the user to set "
                "sandbox_backend: modal (or daytona)."
            )
        if self._options is None or self._options.local_isolation == "none":
            # unisolated: asked again for each new user, as the people served may grow
            try:
                self._options = sandbox_options(self.settings, self._store)
            except ConfigError as exc:
                raise SandboxError(f"commands are switched off: {exc.problem}") from None
        return open_sandbox(
            self.settings.sandbox_backend, user_id, home=self.settings.home, state=self.state,
            options=self._options,
        )

    def sandbox(self, user_id: str) -> Sandbox:
        box = self._open_boxes.get(user_id)
        if box is None:
            box = self._opener(user_id)
            self._open_boxes[user_id] = box
            while len(self._open_boxes) > MAX_OPEN:
                oldest = next(iter(self._open_boxes))
                if self._in_flight.get(oldest) or oldest in self._used:
                    break
                self._open_boxes.popitem(last=False)
        self._open_boxes.move_to_end(user_id)
        return box

    @asynccontextmanager
    async def use(self, user_id: str) -> AsyncIterator[Sandbox]:
        """The user's sandbox for one operation; marks it used by the current turn."""
        from sandboxes import SandboxError, WorkspaceLost

        box = self.sandbox(user_id)
        self._in_flight[user_id] = self._in_flight.get(user_id, 0) + 1
        self._used.add(user_id)
        try:
            yield box
        except WorkspaceLost as lost:
            log.error("the workspace of %s started empty: %s", user_id, lost.reason)
            raise SandboxError(fresh_start_notice(lost.reason)) from lost
        finally:
            left = self._in_flight[user_id] - 1
            if left:
                self._in_flight[user_id] = left
            else:
                del self._in_flight[user_id]

    def file_lock(self, user_id: str, path: str) -> asyncio.Lock:
        """One lock per file, so two edits of one file in parallel never lose either edit."""
        key = (user_id, path)
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    def was_used(self, user_id: str) -> bool:
        return user_id in self._used

    async def settle(self, user_id: str) -> bool:
        """After a turn: hibernate the user's sandbox if this backend wants it, it was used and
        nothing else is using it now. Returns whether it hibernated."""
        if user_id not in self._used or self._in_flight.get(user_id):
            return False
        self._used.discard(user_id)
        self._locks = {k: v for k, v in self._locks.items() if k[0] != user_id or v.locked()}
        if not self.hibernate_after_turn:
            return False
        box = self._open_boxes.get(user_id)
        if box is None:
            return False
        try:
            await box.hibernate()
        except Exception as exc:
            log.warning("could not hibernate the sandbox of %s: %s", user_id, exc)
            return False
        return True


async def settle_after_turn(ctx: HookContext) -> None:
    """An ``AfterTurn`` hook: hibernate the sandbox the turn used (see ``Workspaces.settle``)."""
    await ctx.services.workspaces.settle(ctx.user_id)
