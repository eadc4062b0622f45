"""Schedules for automations: parse what users write, compute next runs, describe them.

Cron schedules fire at wall-clock times in their own timezone (`core.scheduler.cron` holds the
DST rules), intervals count real elapsed time from their anchor, one-shots fire once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from typing import Literal
from zoneinfo import ZoneInfo, available_timezones

from core.scheduler import cron

EXAMPLES = (
    '"every 15m", "daily at 09:00", "mondays 8:30", "0 9 * * 1-5", "in 2 hours" '
    "or an ISO time like 2026-12-01T09:00"
)
MIN_INTERVAL = timedelta(minutes=1)
MAX_INTERVAL = timedelta(days=366)

_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_UNIT_NAMES = {"d": "day", "h": "hour", "m": "minute", "s": "second"}
_UNIT_WORDS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
    **dict.fromkeys(("d", "day", "days"), 86400),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 604800),
}
_INTERVAL_WORDS = {"hourly": "every hour", "daily": "every day", "weekly": "every week"}
_MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_WEEKDAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_DAY_WORDS = {
    **{word: frozenset({i}) for i, day in enumerate(_WEEKDAYS) for word in (day, f"{day}s")},
    **{day[:3]: frozenset({i}) for i, day in enumerate(_WEEKDAYS)},
    **dict.fromkeys(("tues",), frozenset({2})),
    **dict.fromkeys(("weds",), frozenset({3})),
    **dict.fromkeys(("thur", "thurs"), frozenset({4})),
    **dict.fromkeys(("day", "days", "daily", "everyday"), frozenset(range(7))),
    **dict.fromkeys(("weekday", "weekdays"), frozenset({1, 2, 3, 4, 5})),
    **dict.fromkeys(("weekend", "weekends"), frozenset({0, 6})),
}
_FILLER_WORDS = ("on", "every", "each", "and")

_INTERVAL = re.compile(r"(?:every|each) (?:(\d+) ?)?([a-z]+)")
_CANONICAL_INTERVAL = re.compile(r"every ([1-9]\d*)([dhms])")
_RELATIVE = re.compile(r"in (\d+|an?|one) ?([a-z]+)")
_ISO = re.compile(
    r"(?:(?:at|on) )?(\d{4}-\d{2}-\d{2})[t ](\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?) ?"
    r"(z|[+-]\d{2}(?::?\d{2})?)?"
)
_TIME = (
    r"(?:(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))? ?(?P<meridiem>am|pm)?"
    r"|(?P<word>noon|midnight))"
)
_TIME_LAST = re.compile(rf"(?P<days>.*?) ?(?P<at>\bat )?{_TIME}")
_TIME_FIRST = re.compile(rf"(?P<at>at )?{_TIME} (?P<days>.+)")
_TRAILING_ZONE = re.compile(r"(?P<rest>.+?) (?P<in>in )?(?P<zone>[a-z][\w+\-]*(?:/[\w+\-]+)*)")
_CRON_FIELD = re.compile(r"[\d*/,\-?#l]+")


class ScheduleError(ValueError):
    """A schedule that can't be used; the message says why and shows forms that work."""


@dataclass(frozen=True)
class Schedule:
    """When an automation runs; store it with `to_json`, ask it `next_run`."""

    kind: Literal["cron", "interval", "once"]
    expr: str  # 5-field cron, "every <N><s|m|h|d>", or an ISO-8601 UTC instant
    timezone: str  # IANA name
    anchor: datetime | None = None  # intervals: the instant counting starts from (UTC)

    def __post_init__(self) -> None:
        if self.kind not in ("cron", "interval", "once"):
            raise ScheduleError(f'unknown schedule kind "{self.kind}"')
        if (self.kind == "interval") != (self.anchor is not None):
            raise ScheduleError("interval schedules, and only they, need an anchor")
        if self.anchor is not None and self.anchor.utcoffset() is None:
            raise ScheduleError("a schedule's anchor must be timezone-aware")

    def to_json(self) -> str:
        anchor = None if self.anchor is None else _iso_utc(self.anchor)
        fields = {"kind": self.kind, "expr": self.expr, "timezone": self.timezone}
        return json.dumps({**fields, "anchor": anchor}, sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> Schedule:
        try:
            data = json.loads(raw)
            anchor = data.get("anchor")
            schedule = cls(
                kind=data["kind"],
                expr=data["expr"],
                timezone=validate_timezone(data["timezone"]),
                anchor=None if anchor is None else _parse_iso_utc(anchor),
            )
            if schedule.kind == "once":
                _parse_iso_utc(schedule.expr)
            elif schedule.kind == "interval":
                _check_interval(_interval_length(schedule.expr).total_seconds(), schedule.expr)
            elif not cron.is_canonical(schedule.expr):
                raise ScheduleError(f'not a valid 5-field cron expression: "{schedule.expr}"')
        except (TypeError, KeyError, AttributeError, json.JSONDecodeError) as error:
            raise ScheduleError(f"not a stored schedule: {raw!r}") from error
        return schedule


def validate_timezone(name: str) -> str:
    """The canonical IANA name for `name` (matched case-insensitively), or ScheduleError."""
    canonical = _timezones().get(name.strip().lower()) if isinstance(name, str) else None
    if canonical is None:
        raise ScheduleError(
            f'unknown timezone "{name}"; use an IANA name such as "Europe/Berlin", '
            '"America/New_York" or "UTC"'
        )
    return canonical


def parse_schedule(text: str, *, timezone: str = "UTC", now: datetime) -> Schedule:
    """Turn what a user wrote into a Schedule, or raise ScheduleError saying what works.

    A trailing timezone ("daily at 9 in Europe/Berlin", "every 2h UTC") overrides `timezone`.
    """
    if now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    said = " ".join(text.split())
    request = _Request(said.lower(), said, validate_timezone(timezone), now.astimezone(UTC))
    if not said:
        raise ScheduleError(f"empty schedule; try {EXAMPLES}")
    zone_match = _TRAILING_ZONE.fullmatch(request.text)
    if zone_match is not None and _names_zone(zone_match["zone"], bool(zone_match["in"])):
        zone = validate_timezone(said.rsplit(" ", 1)[-1])
        request = _Request(zone_match["rest"], said, zone, request.now)
    for parser in (_parse_cron, _parse_interval, _parse_relative, _parse_iso, _parse_clock):
        schedule = parser(request)
        if schedule is not None:
            return schedule
    raise ScheduleError(f'can\'t understand schedule "{said}"; try {EXAMPLES}')


def next_run(schedule: Schedule, after: datetime) -> datetime | None:
    """The first run strictly after `after` (aware, UTC); None when a one-shot is past."""
    if after.utcoffset() is None:
        raise ValueError("after must be timezone-aware")
    after = after.astimezone(UTC)
    if schedule.kind == "once":
        instant = _parse_iso_utc(schedule.expr)
        return instant if instant > after else None
    if schedule.kind == "interval":
        assert schedule.anchor is not None
        anchor = schedule.anchor.astimezone(UTC)
        step = _interval_length(schedule.expr)
        return anchor + max((after - anchor) // step + 1, 0) * step
    return cron.next_cron(schedule.expr, ZoneInfo(schedule.timezone), after)


def describe(schedule: Schedule) -> str:
    """A short human description, e.g. "at 09:00 on Monday–Friday (Europe/Berlin)"."""
    if schedule.kind == "interval":
        number, unit = _split_interval(schedule.expr)
        name = _UNIT_NAMES[unit]
        if unit == "d" and number % 7 == 0:
            number, name = number // 7, "week"
        return f"every {name}" if number == 1 else f"every {number} {name}s"
    if schedule.kind == "once":
        local = _parse_iso_utc(schedule.expr).astimezone(ZoneInfo(schedule.timezone))
        return f"once at {local:%Y-%m-%d %H:%M} {schedule.timezone}"
    return f"{cron.describe_cron(schedule.expr)} ({schedule.timezone})"


@dataclass(frozen=True)
class _Request:
    text: str  # lower-case, single-spaced, any trailing timezone removed
    said: str  # what the user wrote, for messages
    zone: str
    now: datetime


def _parse_cron(request: _Request) -> Schedule | None:
    text = request.text
    if text.startswith("@"):
        if text not in _MACROS:
            raise ScheduleError(
                f'unknown cron macro "{request.said}"; try @hourly, @daily, @weekly or @monthly'
            )
        return _cron_schedule(_MACROS[text], request)
    fields = text.split(" ")
    if len(fields) < 5 or sum(bool(_CRON_FIELD.fullmatch(field)) for field in fields) < 3:
        return None
    if len(fields) != 5:
        raise ScheduleError(
            f'"{request.said}" has {len(fields)} fields; cron expressions here have 5 '
            "(minute hour day-of-month month day-of-week, no seconds), "
            'e.g. "*/15 * * * *" or "0 9 * * 1-5"'
        )
    try:
        expr = cron.canonical(fields)
    except ValueError as error:
        raise ScheduleError(
            f'invalid cron expression "{request.said}" ({error}); the 5 fields are minute hour '
            'day-of-month month day-of-week, e.g. "*/15 * * * *" or "0 9 * * 1-5"'
        ) from error
    return _cron_schedule(expr, request)


def _cron_schedule(expr: str, request: _Request) -> Schedule:
    if cron.next_cron(expr, ZoneInfo(request.zone), request.now) is None:
        raise ScheduleError(f'cron expression "{request.said}" never runs; check its day and month')
    return Schedule("cron", expr, request.zone)


def _parse_interval(request: _Request) -> Schedule | None:
    match = _INTERVAL.fullmatch(_INTERVAL_WORDS.get(request.text, request.text))
    if match is None or match[2] not in _UNIT_WORDS:
        return None
    seconds = int(match[1] or 1) * _UNIT_WORDS[match[2]]
    _check_interval(seconds, request.said)
    anchor = request.now.replace(microsecond=0)
    return Schedule("interval", _interval_expr(seconds), request.zone, anchor=anchor)


def _parse_relative(request: _Request) -> Schedule | None:
    match = _RELATIVE.fullmatch(request.text)
    if match is None or match[2] not in _UNIT_WORDS:
        return None
    seconds = (int(match[1]) if match[1].isdigit() else 1) * _UNIT_WORDS[match[2]]
    if seconds > MAX_INTERVAL.total_seconds():
        raise ScheduleError(
            f'"{request.said}" is more than a year away; give a date like 2027-12-01T09:00'
        )
    return _once(request.now + timedelta(seconds=seconds), request)


def _parse_iso(request: _Request) -> Schedule | None:
    match = _ISO.fullmatch(request.text)
    if match is None:
        return None
    clock = match[2] if len(match[2].split(":")[0]) == 2 else f"0{match[2]}"
    try:
        instant = datetime.fromisoformat(f"{match[1]}T{clock}{match[3] or ''}".upper())
    except ValueError as error:
        raise ScheduleError(
            f'"{request.said}" is not a valid date and time; try {EXAMPLES}'
        ) from error
    if instant.utcoffset() is None:
        instant = cron.resolve(instant, ZoneInfo(request.zone))
    return _once(instant, request)


def _parse_clock(request: _Request) -> Schedule | None:
    today = request.now.astimezone(ZoneInfo(request.zone)).date()
    for pattern in (_TIME_LAST, _TIME_FIRST):
        match = pattern.fullmatch(request.text)
        if match is None:
            continue
        days = _days(match["days"], today)
        explicit = match["at"] or match["minute"] or match["meridiem"] or match["word"]
        if days is None or (not match["days"] and not explicit):
            continue
        clock = _time_of_day(match)
        if clock is None:
            raise ScheduleError(
                f'"{request.said}" has no valid time of day; use 0:00–23:59 or 1–12 am/pm, '
                'e.g. "daily at 09:00" or "at 7pm"'
            )
        if isinstance(days, date):
            wall = datetime.combine(days, clock)
            return _once(cron.resolve(wall, ZoneInfo(request.zone)), request)
        expr = f"{clock.minute} {clock.hour} * * {cron.weekday_field(days)}"
        return Schedule("cron", expr, request.zone)
    if _days(request.text, today) is not None:
        raise ScheduleError(
            f'"{request.said}" needs a time of day; try "{request.said} at 9:00" or "mondays 8:30"'
        )
    return None


def _days(text: str, today: date) -> set[int] | date | None:
    """Weekdays (0 = Sunday) named by `text`, a single date, or None if it names neither."""
    if not text:
        return set(range(7))
    one = text.removeprefix("on ")
    if one in ("today", "tomorrow"):
        return today + timedelta(days=int(one == "tomorrow"))
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", one):
        try:
            return date.fromisoformat(one)
        except ValueError:
            return None
    spans = re.sub(r" ?(?:-|–|\bto\b|\bthrough\b|\bthru\b) ?", "-", text)
    words = [word for word in re.split(r"[ ,&/]+", spans) if word not in ("", *_FILLER_WORDS)]
    days: set[int] = set()
    for word in words:
        first, _, last = word.partition("-")
        if last:
            if first not in _DAY_WORDS or last not in _DAY_WORDS:
                return None
            start, end = min(_DAY_WORDS[first]), min(_DAY_WORDS[last])
            days.update((start + step) % 7 for step in range((end - start) % 7 + 1))
        elif word in _DAY_WORDS:
            days.update(_DAY_WORDS[word])
        else:
            return None
    return days or None


def _time_of_day(match: re.Match[str]) -> time | None:
    if match["word"]:
        return time(12) if match["word"] == "noon" else time(0)
    hour, minute = int(match["hour"]), int(match["minute"] or 0)
    meridiem = match["meridiem"]
    if meridiem and 1 <= hour <= 12:
        hour = hour % 12 + (12 if meridiem == "pm" else 0)
    elif meridiem or hour > 23 or minute > 59:
        return None
    return time(hour, minute)


def _once(instant: datetime, request: _Request) -> Schedule:
    schedule = Schedule("once", _iso_utc(instant), request.zone)
    if _parse_iso_utc(schedule.expr) <= request.now:
        raise ScheduleError(
            f'"{request.said}" is in the past ({describe(schedule)}); give a future time, '
            'e.g. "in 2 hours" or "tomorrow at 9"'
        )
    return schedule


def _check_interval(seconds: float, text: str) -> None:
    if seconds < MIN_INTERVAL.total_seconds():
        raise ScheduleError(
            f'"{text}" is too frequent: schedules are checked once a minute, so the shortest '
            'interval is 1 minute; try "every minute" or "every 5m"'
        )
    if seconds > MAX_INTERVAL.total_seconds():
        raise ScheduleError(
            f'"{text}" is longer than a year; for rare jobs use a cron expression '
            'such as "0 9 1 1 *"'
        )


def _interval_expr(seconds: int) -> str:
    unit = next(unit for unit, size in _UNIT_SECONDS.items() if seconds % size == 0)
    return f"every {seconds // _UNIT_SECONDS[unit]}{unit}"


def _interval_length(expr: str) -> timedelta:
    number, unit = _split_interval(expr)
    return timedelta(seconds=number * _UNIT_SECONDS[unit])


def _split_interval(expr: str) -> tuple[int, str]:
    match = _CANONICAL_INTERVAL.fullmatch(expr)
    if match is None:
        raise ScheduleError(f'not a canonical interval: "{expr}" (expected e.g. "every 15m")')
    return int(match[1]), match[2]


def _iso_utc(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_iso_utc(raw: str) -> datetime:
    try:
        instant = datetime.fromisoformat(raw)
    except (TypeError, ValueError) as error:
        raise ScheduleError(f"not an ISO-8601 instant: {raw!r}") from error
    if instant.utcoffset() is None:
        raise ScheduleError(f"ISO-8601 instant without an offset: {raw!r}")
    return instant.astimezone(UTC)


def _names_zone(word: str, after_in: bool) -> bool:
    """Whether a trailing word is meant as a timezone: a known one, or a mistyped Area/Place."""
    if word in _timezones():
        return True
    return "/" in word and (after_in or word.split("/")[0] in _zone_areas())


@cache
def _timezones() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


@cache
def _zone_areas() -> frozenset[str]:
    return frozenset(name.split("/")[0] for name in _timezones() if "/" in name)
