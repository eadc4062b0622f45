"""Send recorded replies through a platform sender; retry with backoff; never send one twice."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.contracts.senders import (
    DeliveryFailed,
    PartSender,
    RecordSender,
    Reopener,
    Sender,
    VoiceSender,
)
from core.ids import new_id
from core.platforms.offload import formatted
from core.store import Store
from core.store.deliveries import Delivery

if TYPE_CHECKING:
    from core.config import Settings

log = logging.getLogger("iris.delivery")

MAX_ATTEMPTS = 8
CLAIM_SECONDS = 120.0
HOLD_SECONDS = 7 * 86400.0  # how long a reply waits for the person to answer a template


def backoff(attempt: int) -> float:
    return min(2.0 ** attempt, 600.0)


@dataclass
class DeliveryService:
    store: Store
    senders: Mapping[str, Sender]
    settings: Settings | None = None  # for spoken replies, whose speech is made when sent

    async def attempt(self, user_id: str, delivery_id: int) -> str:
        """One delivery attempt; returns the delivery's status afterwards."""
        owner = new_id("dlv")
        claimed = self.store.deliveries.claim(user_id, delivery_id, owner, CLAIM_SECONDS)
        if claimed is None:
            return self.store.deliveries.get(user_id, delivery_id).status
        return await self.send_claimed(claimed, owner)

    async def send_claimed(self, claimed: Delivery, owner: str) -> str:
        """Send a delivery ``owner`` has claimed (``attempt``, or recorded claimed with its
        turn: ``core.turn.commit.record_turn``); returns its status afterwards."""
        user_id, delivery_id = claimed.user_id, claimed.id
        sender = self.senders.get(claimed.platform)
        if sender is None:
            self.store.deliveries.mark_retry(
                user_id, delivery_id, owner, error=f"no sender for {claimed.platform}",
                retry_at=None,
            )
            return "failed"
        reopener = sender if isinstance(sender, Reopener) and sender.can_reopen and not \
            claimed.source.startswith(("direct:", "pairing:")) else None
        seen = self.store.inbox.last_id(user_id, claimed.chat_key) if reopener else 0
        try:
            try:
                if (closed := self._outside_window(sender, claimed)) is not None:
                    if reopener is not None:
                        return await self._hold(reopener, claimed, owner, closed, seen)
                    self.store.deliveries.mark_retry(user_id, delivery_id, owner,
                                                     error=closed, retry_at=None)
                    return "failed"
                try:
                    ids = await self._send(sender, claimed, owner)
                except DeliveryFailed as refused:  # the platform says the window is closed
                    if not refused.window_closed or reopener is None:
                        raise
                    return await self._hold(reopener, claimed, owner, str(refused), seen)
            except DeliveryFailed:
                raise
            except Exception as exc:
                log.exception("sender for %s crashed", claimed.platform)
                raise DeliveryFailed(f"{type(exc).__name__}: {exc}") from exc
        except DeliveryFailed as exc:
            retry = exc.retryable and claimed.attempts < MAX_ATTEMPTS
            wait = exc.retry_after if exc.retry_after is not None else backoff(claimed.attempts)
            log.warning("delivery %s attempt %s failed: %s", delivery_id, claimed.attempts, exc)
            self.store.deliveries.mark_retry(
                user_id, delivery_id, owner, error=str(exc),
                retry_at=self.store.clock.now() + wait if retry else None,
            )
            return "pending" if retry else "failed"
        self.store.deliveries.mark_sent(user_id, delivery_id, owner, ids)
        return "sent"

    def _outside_window(self, sender: Sender, claimed: Delivery) -> str | None:
        """Why the delivery may not be sent any more (a platform that only lets Iris answer
        within a time of the person's last message), or None."""
        window = getattr(sender, "reply_window_seconds", None)
        if window is None:
            return None
        last = self.store.inbox.last_received(claimed.user_id, claimed.chat_key)
        if claimed.source.startswith(("direct:", "pairing:")):  # answers to a message just in
            last = max(last or 0.0, claimed.created_at)
        if last is not None and self.store.clock.now() - last <= window:
            return None
        since = "no message from this chat yet" if last is None else (
            f"the last message from this chat is {(self.store.clock.now() - last) / 3600:.1f} "
            "hours old")
        return (f"undeliverable: outside {claimed.platform}'s {window / 3600:g}-hour reply "
                f"window ({since}); it opens again when the person writes")

    async def _hold(self, sender: Reopener, claimed: Delivery, owner: str, closed: str,
                    seen: int) -> str:
        """Outside the window with a template configured: send the template once (one per
        chat while replies wait), keep the reply until the person writes back
        (``release_held``) or ``HOLD_SECONDS`` pass. ``seen`` is the chat's newest message
        when this attempt began: one newer came in before the hold was recorded."""
        store, now = self.store, self.store.clock.now()
        if claimed.held_at is not None and now - claimed.held_at >= HOLD_SECONDS:
            store.deliveries.mark_retry(
                claimed.user_id, claimed.id, owner, retry_at=None,
                error=f"{closed}; the template sent to reopen it got no answer in "
                      f"{HOLD_SECONDS / 86400:g} days")
            return "failed"
        reopen = claimed.reopen_id or store.deliveries.reopen_sent(
            claimed.user_id, claimed.chat_key, since=now - HOLD_SECONDS)
        if reopen is None:
            reopen = await sender.reopen(claimed.target, claimed.text)
        store.deliveries.hold(
            claimed.user_id, claimed.id, owner, reopen_id=reopen,
            until=(claimed.held_at or now) + HOLD_SECONDS,
            note=f"held: outside {claimed.platform}'s reply window; a template asked the "
                 "person to write back, and this reply goes out when they do")
        if store.inbox.last_id(claimed.user_id, claimed.chat_key) == seen:
            return "pending"
        # The person wrote while the template was on its way: their message's release found
        # nothing held yet, so the chat's held replies are released (and this one sent) here.
        status = "pending"
        for delivery_id in store.deliveries.release_held(claimed.user_id, claimed.chat_key):
            result = await self.attempt(claimed.user_id, delivery_id)
            status = result if delivery_id == claimed.id else status
        return status

    async def _send(self, sender: Sender, claimed: Delivery, owner: str) -> list[str]:
        voice = claimed.target.get("voice")
        if voice:  # a spoken reply: speech made (once) and kept in the user's object store
            if not isinstance(sender, VoiceSender):
                raise DeliveryFailed(f"{claimed.platform} sends no voice notes", retryable=False)
            from core.platforms.tts import SpeechFailed, voice_audio

            try:
                audio, filename = await voice_audio(self.store, self.settings, claimed)
            except SpeechFailed as exc:
                raise DeliveryFailed(str(exc), retryable=exc.retryable) from exc
            return [await sender.send_voice(claimed.target, audio, filename)]
        if isinstance(sender, RecordSender):
            return await sender.send_record(claimed)
        if not isinstance(sender, PartSender):
            return await sender.send(claimed.target, claimed.text)
        multi = sender
        parts = await formatted(multi.parts, claimed.text)
        ids = list(claimed.platform_ids)
        for index in range(len(ids), len(parts)):
            ids.append(await multi.send_part(claimed.target, parts[index], index))
            if index < len(parts) - 1:  # the last part's id is stored by mark_sent
                self.store.deliveries.record_progress(claimed.user_id, claimed.id, owner, ids)
        return ids

    async def sweep(self, *, limit: int = 100) -> int:
        """Attempt every due delivery (cron tick and emulator ticker)."""
        from core.lanes import in_store_lane

        count = 0
        for user_id, delivery_id in await in_store_lane(None, self.store.deliveries.due,
                                                        limit=limit):
            await self.attempt(user_id, delivery_id)
            count += 1
        return count
