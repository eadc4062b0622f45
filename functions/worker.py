"""The worker: take a chat's lease, drain its inbox in arrival order, one turn per entry.

An entry is marked finished in the same transaction that stores its turn, so a crash anywhere
before that commit leaves the entry pending: the next dispatch (or the cron sweeper, once the
lease expires) runs it again. After the commit the reply is a recorded delivery that is sent,
retried and never sent twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from core.contracts.dispatch import ChatRef
from core.contracts.outcome import TurnOutcome
from core.ids import new_id
from core.lanes import in_store_lane
from core.platforms.delivery import CLAIM_SECONDS
from core.platforms.registry import PLATFORMS
from core.platforms.typing import typing_while
from core.store.inbox import InboxEntry
from core.turn.commit import TurnAlreadyFinished, TurnRecord, record_turn
from core.turn.loop import run_turn
from core.turn.replies import outbound_for

if TYPE_CHECKING:
    from core.config import Settings
    from core.contracts.deps import TurnDeps
    from core.contracts.dispatch import Notifier
    from core.contracts.hooks import AfterTurn, HookContext
    from core.contracts.senders import Sender
    from core.model.priority import InteractiveFirst
    from core.platforms.delivery import DeliveryService
    from core.store import Store

log = logging.getLogger("iris.worker")
T = TypeVar("T")

MAX_ATTEMPTS = 3
WATCH_SECONDS = 1.0  # how often a running turn's deadline is looked at (on the store's clock)


class Runtime(Protocol):
    """What the worker uses of its runtime (``functions.runtime.Runtime``): named here, so the
    dispatcher that starts the worker and the runtime that builds that dispatcher form no
    circle through the worker."""

    @property
    def settings(self) -> Settings: ...
    @property
    def store(self) -> Store: ...
    @property
    def senders(self) -> Mapping[str, Sender]: ...
    @property
    def delivery(self) -> DeliveryService: ...
    @property
    def notifier(self) -> Notifier: ...
    @property
    def checkpoint(self) -> Callable[[str], None] | None: ...
    @property
    def priority(self) -> InteractiveFirst: ...
    @property
    def after_turn(self) -> Sequence[AfterTurn]: ...

    def turn_deps(self) -> TurnDeps: ...

    def hook_context(self, entry: InboxEntry, outcome: TurnOutcome) -> HookContext: ...


class TurnHung(Exception):
    """The turn ran past ``turn_timeout`` and was stopped; its entry stays pending."""


def lease_name(chat: ChatRef) -> str:
    return f"chat:{chat.user_id}:{chat.chat_key}"


async def _renew(rt: Runtime, name: str, owner: str, user_id: str) -> None:
    interval = rt.settings.lease_seconds / 3
    while True:
        await asyncio.sleep(interval)
        if not await in_store_lane(user_id, rt.store.leases.renew, name, owner,
                                   rt.settings.lease_seconds):
            log.warning("lost lease %s", name)
            return


async def process(rt: Runtime, entry: InboxEntry) -> TurnOutcome | None:
    """Run, commit and deliver one entry (taken, its attempt counted: ``Drains.take``);
    returns the outcome for the after-turn hooks."""
    store = rt.store
    if entry.attempts > MAX_ATTEMPTS:  # counted when the entry was taken
        session = await in_store_lane(
            entry.user_id, store.sessions.current, entry.user_id, entry.chat_key,
            entry.message.platform, idle_seconds=rt.settings.session_idle_hours * 3600,
            at=entry.received_at,
        )
        reply = ("Sorry, I could not process this message (it failed several times, or took "
                 "too long each time).")
        record = TurnRecord(
            entry=entry, session_id=session.id, messages=[], reply=reply, status="failed",
            error=f"gave up after {MAX_ATTEMPTS} attempts",
            outbound=outbound_for(entry, reply, "failed"),
        )
        outcome = None
    else:
        spec = PLATFORMS[entry.message.platform]
        async with typing_while(rt.senders, spec.name, spec.reply_address(entry.message)):
            outcome = await run_turn(rt.turn_deps(), entry)
        record = TurnRecord(
            entry=entry, session_id=outcome.session_id, messages=outcome.messages,
            usage=outcome.usage, reply=outcome.reply, status=outcome.status, error=outcome.error,
            # a stopped turn was already answered by /stop itself
            outbound=(outbound_for(entry, outcome.reply, outcome.status, outcome.target_extras)
                      if outcome.status != "cancelled" else None),
        )
    turn_checkpoint = rt.checkpoint or (lambda step: None)
    turn_checkpoint("before_commit")
    sender_id = new_id("dlv")
    try:
        delivery = await in_store_lane(entry.user_id, record_turn, store, record,
                                       claim=(sender_id, CLAIM_SECONDS))
    except TurnAlreadyFinished:
        log.warning("inbox %s was finished by another worker; discarding this run", entry.id)
        rt.notifier.notify(entry.id)
        return None
    rt.notifier.notify(entry.id)
    await asyncio.sleep(0)  # let a waiting HTTP request answer before delivery and hooks run
    turn_checkpoint("before_delivery")
    if delivery is not None:
        await rt.delivery.send_claimed(delivery, sender_id)
        turn_checkpoint("after_delivery")
    return outcome


async def within_deadline(rt: Runtime, turn: Coroutine[Any, Any, T]) -> T:
    """``turn``'s result, or TurnHung once it has run ``turn_timeout`` seconds on the store's
    clock (then it is cancelled). A hung turn is an attempt like a crashed one: the sweeper
    resumes it, and after ``MAX_ATTEMPTS`` it is given up with a reply. Without this a turn
    stuck in an await would renew its lease, and hold its chat, forever."""
    task = asyncio.ensure_future(turn)
    clock, limit = rt.store.clock, rt.settings.turn_timeout
    started = clock.now()
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=WATCH_SECONDS)
            if done:
                return task.result()
            if clock.now() - started >= limit:
                break
    except asyncio.CancelledError:
        task.cancel()
        raise
    task.cancel()
    await asyncio.wait({task})  # its own cleanup (lease, typing, answer feed) runs first
    raise TurnHung


async def run_after_turn(rt: Runtime, finished: list[tuple[InboxEntry, TurnOutcome]]) -> None:
    """Reviews, titles, embeddings: best effort, after the chat's lease is released, so the
    user's next message never waits behind them."""
    for entry, outcome in finished:
        ctx = rt.hook_context(entry, outcome)
        for hook in rt.after_turn:
            try:
                await hook(ctx)
            except Exception:
                log.exception("after-turn hook %s failed for inbox %s", hook, entry.id)


async def drain(rt: Runtime, chat: ChatRef) -> int:
    """Run every pending entry of the chat, unless another worker holds its lease.
    Returns the number of entries processed."""
    owner = new_id("wrk")
    name = lease_name(chat)
    finished: list[tuple[InboxEntry, TurnOutcome]] = []
    interactive = rt.settings.interactive_first and not chat.chat_key.startswith("cron:")
    try:
        async with rt.priority.interactive() if interactive else contextlib.nullcontext():
            return await _drain(rt, chat, name, owner, finished)
    finally:
        await run_after_turn(rt, finished)


async def _take(rt: Runtime, chat: ChatRef, name: str, owner: str) -> InboxEntry | None:
    """The chat's next entry, its lease held (or let go when nothing is pending). A drain
    cancelled while the take is in flight (a closing event loop, a stopped server) still lets
    a lease that take got go, instead of leaving the chat to wait out the lease."""
    take = asyncio.ensure_future(in_store_lane(
        chat.user_id, rt.store.drains.take, chat.user_id, chat.chat_key, name, owner,
        rt.settings.lease_seconds))
    try:
        return await asyncio.shield(take)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            if await take is not None:
                await in_store_lane(chat.user_id, rt.store.leases.release, name, owner)
        raise


async def _drain(
    rt: Runtime, chat: ChatRef, name: str, owner: str,
    finished: list[tuple[InboxEntry, TurnOutcome]],
) -> int:
    done = 0
    store = rt.store
    renewer: asyncio.Task[None] | None = None
    holding = False
    try:
        # Each take holds (or takes) the lease and starts the next entry; it lets the lease go
        # in the same transaction that finds nothing pending, so nothing is ever stranded.
        while (entry := await _take(rt, chat, name, owner)) is not None:
            holding = True
            if renewer is None:
                if rt.checkpoint is not None:
                    rt.checkpoint("after_lease")
                renewer = asyncio.create_task(_renew(rt, name, owner, chat.user_id))
            try:
                outcome = await within_deadline(rt, process(rt, entry))
            except TurnHung:
                log.warning("inbox %s: turn ran past %g s and was stopped; it stays pending "
                            "(attempt %d of %d)", entry.id, rt.settings.turn_timeout,
                            entry.attempts, MAX_ATTEMPTS)
                return done
            except Exception:
                log.exception("inbox %s: turn crashed; it stays pending", entry.id)
                return done
            done += 1
            if outcome is not None:
                finished.append((entry, outcome))
        holding = False
        return done
    finally:
        if renewer is not None:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
        if holding:
            await in_store_lane(chat.user_id, store.leases.release, name, owner)
