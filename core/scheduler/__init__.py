"""Schedules for scheduled automations: parsing, next run times across DST, descriptions."""

from core.scheduler.schedule import (
    Schedule,
    ScheduleError,
    describe,
    next_run,
    parse_schedule,
    validate_timezone,
)

__all__ = [
    "Schedule",
    "ScheduleError",
    "describe",
    "next_run",
    "parse_schedule",
    "validate_timezone",
]
