"""Cron expressions in a timezone: when they fire across DST changes, and what they mean.

Wall-clock times map to real UTC instants by rules close to Vixie cron's:

* A wall time the clock skips (spring forward, e.g. 02:30 on 2026-03-29 in Europe/Berlin)
  happens at the moment the clock jumps (03:00 local), so a daily 02:30 job still runs once.
* A wall time the clock repeats (fall back) happens on its first pass only.
* A cron job whose hour field is every hour is about real-time frequency, not wall-clock
  appointments: it skips wall times that do not exist and runs on both passes of a repeated
  hour, so it stays hourly (or every 15 minutes, …) in real time.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from croniter import CroniterBadDateError, CroniterError, croniter

_NEAR_CHANGE = timedelta(hours=3)
_DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_DAY_NUMBERS = {name[:3].lower(): i for i, name in enumerate(_DAY_NAMES)}
_MONTH_NUMBERS = {
    name: i + 1
    for i, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    )
}


def next_cron(expr: str, zone: ZoneInfo, after: datetime) -> datetime | None:
    """First UTC instant strictly after `after` at which the cron `expr` fires in `zone`."""
    hourly = _every_hour(expr)
    start = after
    if hourly:
        # A repeated hour's second pass may still be ahead for wall times already behind us.
        start -= abs(_offset(after + _NEAR_CHANGE, zone) - _offset(after - _NEAR_CHANGE, zone))
    walls = croniter(expr, _wall_time(start, zone))
    best: datetime | None = None
    while True:
        try:
            wall = walls.get_next(datetime)
        except CroniterBadDateError:
            return best
        found = occurrences(wall, zone)
        if not found:
            if hourly:
                continue
            found = (clock_jump(wall, zone),)
        elif not hourly:
            found = found[:1]
        for instant in found:
            if instant > after and (best is None or instant < best):
                best = instant
        # The first occurrence only grows with the wall time: nothing later can beat `best`.
        if best is not None and found[0] >= best:
            return best


def occurrences(wall: datetime, zone: ZoneInfo) -> tuple[datetime, ...]:
    """UTC instants at which the naive `wall` time shows on clocks in `zone`: 0, 1 or 2."""
    first = wall.replace(tzinfo=zone, fold=0)
    second = wall.replace(tzinfo=zone, fold=1)
    if first.utcoffset() == second.utcoffset():
        return (first.astimezone(UTC),)
    if first.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != wall:
        return ()
    return (first.astimezone(UTC), second.astimezone(UTC))


def clock_jump(wall: datetime, zone: ZoneInfo) -> datetime:
    """The UTC instant the clock jumps over the skipped wall time `wall`."""
    before = wall.replace(tzinfo=zone, fold=0).utcoffset()
    low = int((wall.replace(tzinfo=zone, fold=1)).timestamp())
    high = int((wall.replace(tzinfo=zone, fold=0)).timestamp())
    while low < high:
        middle = (low + high) // 2
        if datetime.fromtimestamp(middle, zone).utcoffset() == before:
            low = middle + 1
        else:
            high = middle
    return datetime.fromtimestamp(low, UTC)


def resolve(wall: datetime, zone: ZoneInfo) -> datetime:
    """The single UTC instant a one-off wall time means: its first pass, or the clock jump."""
    found = occurrences(wall, zone)
    return found[0] if found else clock_jump(wall, zone)


def _wall_time(instant: datetime, zone: ZoneInfo) -> datetime:
    return instant.astimezone(zone).replace(tzinfo=None)


def _offset(instant: datetime, zone: ZoneInfo) -> timedelta:
    return instant.astimezone(zone).utcoffset() or timedelta(0)


@lru_cache(maxsize=1024)
def _every_hour(expr: str) -> bool:
    hours = croniter.expand(expr)[0][1]
    return hours == ["*"] or len(hours) == 24


def canonical(fields: list[str]) -> str:
    """Five lower-case cron fields joined, with names as numbers; ValueError saying what's wrong."""
    minute, hour, day, month, weekday = fields
    expr = " ".join(
        (
            minute,
            hour,
            day.replace("?", "*"),
            _numbered(month, _MONTH_NUMBERS),
            _numbered(weekday.replace("?", "*"), _DAY_NUMBERS),
        )
    )
    try:
        croniter.expand(expr)
    except CroniterError as error:
        reason = re.sub(r"^\[.*?\]\s*(?:is not acceptable,?\s*)?", "", str(error))
        raise ValueError(reason or "a field holds something cron does not accept") from error
    return expr


def is_canonical(expr: str) -> bool:
    return len(expr.split(" ")) == 5 and croniter.is_valid(expr)


def weekday_field(days: set[int]) -> str:
    """The day-of-week field for `days` (0 = Sunday), runs of three or more as ranges."""
    if len(days) == 7:
        return "*"
    ordered, parts = sorted(days), []
    while ordered:
        run = 1
        while run < len(ordered) and ordered[run] == ordered[0] + run:
            run += 1
        chunk = [str(day) for day in ordered[:run]]
        parts.append(f"{chunk[0]}-{chunk[-1]}" if run >= 3 else ",".join(chunk))
        ordered = ordered[run:]
    return ",".join(parts)


def describe_cron(expr: str) -> str:
    """Plain English for the common shapes of a canonical cron expression."""
    minute, hour, day, month, weekday = expr.split(" ")
    when = _describe_time(minute, hour)
    days = _weekdays(weekday)
    if when is None or month != "*":
        return f'on cron "{expr}"'
    if day == "*" and days is not None:
        if len(days) == 7:
            return when if when.startswith("every") else f"{when} every day"
        return f"{when} on {_day_list(days)}"
    if re.fullmatch(r"\d+", day) and weekday == "*" and not when.startswith("every"):
        return f"{when} on day {day} of every month"
    return f'on cron "{expr}"'


def _describe_time(minute: str, hour: str) -> str | None:
    if re.fullmatch(r"\d+", minute) and re.fullmatch(r"\d+", hour):
        return f"at {int(hour):02d}:{int(minute):02d}"
    if hour != "*":
        return None
    if minute == "*":
        return "every minute"
    if re.fullmatch(r"\d+", minute):
        return "every hour" if minute == "0" else f"every hour at :{int(minute):02d}"
    step = re.fullmatch(r"(?:\*|0)/(\d+)", minute)
    if step is not None and 60 % int(step[1]) == 0:
        return f"every {step[1]} minutes"
    return None


def _weekdays(field: str) -> set[int] | None:
    if field == "*":
        return set(range(7))
    days: set[int] = set()
    for part in field.split(","):
        bounds = re.fullmatch(r"(\d)(?:-(\d))?", part)
        if bounds is None:
            return None
        first, last = int(bounds[1]), int(bounds[2] or bounds[1])
        days.update(day % 7 for day in range(first, last + 1))
    return days


def _day_list(days: set[int]) -> str:
    monday_first = sorted((day - 1) % 7 for day in days)
    names = [_DAY_NAMES[(day + 1) % 7] for day in monday_first]
    if len(names) >= 3 and monday_first == list(range(monday_first[0], monday_first[-1] + 1)):
        return f"{names[0]}–{names[-1]}"
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _numbered(field: str, names: dict[str, int]) -> str:
    return re.sub(r"[a-z]{3}", lambda m: str(names.get(m[0], m[0])), field)
