"""Where a turn's reply goes: back into the chat it came from on platforms Iris can push to,
to a scheduled job's target for its runs, nowhere for callers that read it from the request
they are waiting on (HTTP, CLI)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.contracts.outcome import OutboundReply
from core.platforms.registry import PLATFORMS

if TYPE_CHECKING:
    from core.store.inbox import InboxEntry


def outbound_for(entry: InboxEntry, reply: str, status: str = "done",
                 extras: dict[str, Any] | None = None) -> OutboundReply | None:
    message = entry.message
    if message.cron is not None:
        from core.scheduler.outbound import cron_outbound

        return cron_outbound(message.cron, reply, status)
    spec = PLATFORMS[message.platform]
    if not spec.push or not reply:
        return None
    target = {**spec.reply_address(message), **(extras or {})}
    return OutboundReply(platform=spec.name, target=target, text=reply)
