"""The cron page's schedule preview: what a written schedule means, in words, and its next
runs, before the job is created (the deterministic parser only: no model call)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from core.scheduler.render import when
from core.scheduler.schedule import ScheduleError, describe, next_run, parse_schedule

SHOWN_RUNS = 3


@dataclass(frozen=True)
class Preview:
    text: str
    words: str | None = None
    runs: list[str] = field(default_factory=list)
    problem: str | None = None


def preview(text: str, *, timezone: str, now: datetime) -> Preview:
    try:
        schedule = parse_schedule(text[:200], timezone=timezone, now=now)
    except ScheduleError as exc:
        return Preview(text=text, problem=f"{exc} (a job can still be created if the model "
                       "understands it)")
    runs, after = [], now
    for _ in range(SHOWN_RUNS):
        upcoming = next_run(schedule, after)
        if upcoming is None:
            break
        runs.append(when(upcoming.timestamp(), schedule.timezone))
        after = upcoming
    return Preview(text=text, words=describe(schedule), runs=runs,
                   problem=None if runs else "that time has already passed")
