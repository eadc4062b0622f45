"""Where a job run's answer goes: the job's target chat, through the ordinary delivery path.

``[SILENT]`` answers are not sent (the turn is still stored). A failed run is always reported:
to the job's target, or, when that chat cannot receive pushes, to the owner's latest chat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.scheduler.targets import Target
from core.store import OutboundReply

if TYPE_CHECKING:
    from core.store.inbox import InboxEntry

SILENT = "[SILENT]"


def is_silent(reply: str) -> bool:
    """The whole answer is ``[SILENT]``; a sentence that merely mentions it is delivered."""
    return reply.strip().upper() == SILENT


def run_info(entry: InboxEntry) -> dict[str, Any]:
    return dict(entry.message.meta.get("cron") or {})


def cron_outbound(entry: InboxEntry, reply: str, status: str) -> OutboundReply | None:
    info = run_info(entry)
    name = info.get("name") or entry.message.chat_id
    job_id = info.get("job_id") or entry.message.chat_id
    target = Target.from_dict(info.get("target"))
    if status == "failed":
        text = (f"⚠️ Scheduled job “{name}” ({job_id}) failed: {reply or 'no answer'}\n"
                f"Its history: /cron runs {job_id}")
        if not target.deliverable:
            target = Target.from_dict(info.get("notify"))
    elif status == "cancelled" or not reply or is_silent(reply):
        return None
    else:
        text = f"⏰ {name}\n\n{reply}"
    if not target.deliverable:
        return None
    return OutboundReply(platform=target.platform, target=dict(target.address), text=text,
                         chat_key=target.chat_key)
