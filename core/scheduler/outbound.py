"""Where a job run's answer goes: the job's target chat, through the ordinary delivery path.

``[SILENT]`` answers are not sent (the turn is still stored). A failed run is always reported:
to the job's target, or, when that chat cannot receive pushes, to the owner's latest chat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.contracts.outcome import OutboundReply
from core.scheduler.targets import Target

if TYPE_CHECKING:
    from core.messages import CronRun

SILENT = "[SILENT]"


def is_silent(reply: str) -> bool:
    """The whole answer is ``[SILENT]``; a sentence that merely mentions it is delivered."""
    return reply.strip().upper() == SILENT


def cron_outbound(run: CronRun, reply: str, status: str) -> OutboundReply | None:
    """The message a run's answer (or failure) becomes, and where it goes; None: not sent."""
    name, job_id = run.name, run.job_id
    target = Target.from_dict(run.target)
    event = run.trigger == "event"  # an event webhook's run (core.event_hooks)
    if status == "failed":
        what = "Event webhook" if event else "Scheduled job"
        text = f"⚠️ {what} “{name}” ({job_id}) failed: {reply or 'no answer'}"
        if not event:
            text += f"\nIts history: /cron runs {job_id}"
        if not target.deliverable:
            target = Target.from_dict(run.notify)
    elif status == "cancelled" or not reply or is_silent(reply):
        return None
    else:
        text = f"{'🔔' if event else '⏰'} {name}\n\n{reply}"
    if not target.deliverable:
        return None
    return OutboundReply(platform=target.platform, target=dict(target.address), text=text,
                         chat_key=target.chat_key)
