"""Schedules in plain language: the deterministic parser first; what it cannot read goes to the
side model, whose answer must itself parse as one of the supported forms."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from core.errors import IrisError
from core.messages import Message
from core.scheduler.schedule import Schedule, ScheduleError, parse_schedule

if TYPE_CHECKING:
    from core.model.llm import Model

log = logging.getLogger("iris.cron")

MAX_TEXT = 200
INSTRUCTIONS = """\
Rewrite a schedule a person wrote as exactly one line in one of these forms:
- a 5-field cron expression, e.g. 0 9 * * 1-5
- every N minutes | every N hours | every N days, e.g. every 15 minutes
- daily at HH:MM, or weekdays like mondays,thursdays at HH:MM
- in N minutes | in N hours | in N days (once)
- a local date and time YYYY-MM-DDTHH:MM (once)
Use 24-hour times. Answer with the line only. If the text is not a schedule, answer NONE."""


def _unreadable(error: ScheduleError) -> bool:
    """Only text the parser could not read goes to the model (not too-frequent or past times)."""
    return str(error).startswith("can't understand")


async def understand_schedule(
    text: str, *, timezone: str, now: datetime, model: Model | None = None,
) -> Schedule:
    """A Schedule for ``text``; ScheduleError (with examples) when neither the parser nor the
    model's rewrite gives a valid one."""
    try:
        return parse_schedule(text, timezone=timezone, now=now)
    except ScheduleError as error:
        if model is None or not text.strip() or len(text) > MAX_TEXT or not _unreadable(error):
            raise
        original = error
    local = now.astimezone(ZoneInfo(timezone))
    question = (
        f"Now: {local:%A %Y-%m-%d %H:%M} ({timezone}).\n"
        f"Schedule: {' '.join(text.split())}"
    )
    try:
        response = await model.complete(
            [Message(role="system", content=INSTRUCTIONS), Message(role="user", content=question)],
            [],
        )
    except IrisError as exc:
        log.warning("the side model could not read the schedule %r: %s", text, exc)
        raise original from None
    lines = (response.message.content or "").strip().strip("`").strip().splitlines()
    answer = lines[0].strip().strip("\"'`").strip() if lines else ""
    if not answer or answer.upper().startswith("NONE"):
        raise original
    try:
        schedule = parse_schedule(answer, timezone=timezone, now=now)
    except ScheduleError:
        log.info("the side model rewrote %r as %r, which does not parse", text, answer)
        raise original from None
    log.info("schedule %r understood as %r", text, answer)
    return schedule
