"""What every chat platform's webhook shares once its message is normalised: the access
check, the owner of a group chat's data, recording through ingress, and answers that go out
without a turn (pairing codes, /stop) — sent after the ack, never on its path."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.background import BackgroundTasks
from starlette.requests import Request

from core.errors import NotFound
from core.lanes import in_store_lane
from core.messages import InboundMessage
from core.platforms.registry import PLATFORMS
from functions.auth import ApiError
from functions.ingress import receive
from functions.runtime import Runtime

log = logging.getLogger("iris.webhooks")

@dataclass(frozen=True)
class Outcome:
    status: str  # recorded | duplicate | denied | answered | ignored | tapped (WhatsApp)
    user_id: str | None = None
    entry_id: int | None = None


def group_owner(rt: Runtime, message: InboundMessage, group_ref: str, title: str | None) -> str:
    """The scope that owns a group chat's data: its own user of kind 'group', so no member's
    private memory enters the group's prompts."""
    return rt.store.users.for_account(
        f"{message.platform}:group:{group_ref}", kind="group", display_name=title
    )


def access(rt: Runtime, message: InboundMessage) -> Any:
    from core.identity.access import check_access

    return check_access(rt.store, rt.settings, message)


async def accept(
    rt: Runtime, message: InboundMessage, background: BackgroundTasks,
    *, group_ref: str | None = None, group_title: str | None = None, instead: str | None = None,
    prepare: Callable[[str, InboundMessage], Awaitable[InboundMessage]] | None = None,
) -> Outcome:
    """Record ``message`` (once) if its sender may talk to Iris, and dispatch its chat; or,
    with ``instead``, answer the sender with that text and record nothing. ``prepare(owner,
    message)`` runs once the owner is known and the message will be recorded (email keeps its
    attachments in the owner's object store there). Database calls run in the ``store`` lane,
    off the event loop."""
    decision = await in_store_lane(message.account, access, rt, message)
    for user_id, delivery_id in decision.notices:
        background.add_task(rt.delivery.attempt, user_id, delivery_id)
    if not decision.allowed:
        if decision.reply:
            await in_store_lane(message.account, answer, rt, message, decision.reply,
                                background)
        return Outcome("denied")
    limit = rt.settings.max_message_chars
    if instead is None and len(message.text) > limit:
        instead = (f"Your message is {len(message.text):,} characters long; the limit is "
                   f"{limit:,}. Please send it in smaller pieces.")
    if instead is not None:
        await in_store_lane(decision.user_id or message.account, answer, rt, message, instead,
                            background)
        return Outcome("answered", decision.user_id)
    owner = decision.user_id
    if message.is_group and group_ref is not None:
        owner = await in_store_lane(owner, group_owner, rt, message, group_ref, group_title)
    if prepare is not None:
        owner = owner or await in_store_lane(message.account, rt.store.users.for_account,
                                             message.account,
                                             display_name=message.display_name)
        message = await prepare(owner, message)
    received = await receive(rt, message, owner=owner)
    if received.delivery_id is not None:
        background.add_task(rt.delivery.attempt, received.user_id, received.delivery_id)
    status = "duplicate" if received.duplicate else "recorded"
    return Outcome(status, received.user_id, received.entry_id)


async def accept_press(
    rt: Runtime, message: InboundMessage, background: BackgroundTasks,
    *, group_ref: str | None = None, group_title: str | None = None,
) -> Outcome:
    """Record a button press on a ``clarify`` question as the asked person's answer, or
    ignore it (someone else's press, an answered, superseded or expired question). Pressing
    twice records one message: the question's id is the message's idempotency key."""
    from core.asking.clarify import pressable

    press = message.press
    if press is None:
        raise ValueError("accept_press takes a message that is a press (message.press set)")

    decision = await in_store_lane(message.account, access, rt, message)
    if not decision.allowed:
        return Outcome("ignored")
    owner = decision.user_id
    if message.is_group and group_ref is not None:
        owner = await in_store_lane(owner, group_owner, rt, message, group_ref, group_title)
    question = await in_store_lane(
        owner, pressable, rt.store, rt.settings, user_id=owner, chat_key=message.chat_key,
        account=message.account, question_id=press.question_id, number=press.choice)
    if question is None:
        return Outcome("ignored", owner)
    received = await receive(rt, message, owner=owner)
    return Outcome("duplicate" if received.duplicate else "recorded", received.user_id,
                   received.entry_id)


def answer(rt: Runtime, message: InboundMessage, text: str, background: BackgroundTasks) -> None:
    """Answer without a turn. With a known user the answer is a delivery row (retried, sent
    once even when the platform re-sends the event); a stranger's is sent best effort."""
    target = PLATFORMS[message.platform].reply_address(message)
    try:
        user_id = rt.store.users.resolve(message.account)
    except NotFound:
        sender = rt.senders.get(message.platform)
        if sender is not None:
            background.add_task(_send_once, sender, target, text)
        return
    delivery_id = rt.store.deliveries.add(
        user_id, source=f"direct:{message.platform}:{message.platform_message_id}",
        platform=message.platform, chat_key=message.chat_key, target=target, text=text,
    )
    if delivery_id is not None:
        background.add_task(rt.delivery.attempt, user_id, delivery_id)


async def _send_once(sender: Any, target: dict[str, Any], text: str) -> None:
    try:
        await sender.send(target, text)
    except Exception as exc:
        log.warning("could not answer an unknown sender: %s", exc)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (declared or streamed)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"request body over {limit} bytes", code="body_too_large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"request body over {limit} bytes", code="body_too_large")
        chunks.append(chunk)
    return b"".join(chunks)
