"""Dates and relative times in a search query, resolved against the clock.

"What did I do last Tuesday?", "on May 1", "yesterday", "three days ago", "last week": the
words name a span of days, not something the messages say. ``resolve`` finds such phrases,
returns the span they mean as of ``now`` (whole days in the user's time zone: "yesterday"
at 00:30 in Berlin is the Berlin day before) and the query with the phrases taken out, so the
words ranking does not look for "Tuesday" in the messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
_MONTH_ALT = "|".join(f"{m[:3]}(?:{m[3:]})?" if len(m) > 3 else m for m in MONTHS)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_COUNT = r"(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"


@dataclass(frozen=True)
class Window:
    since: float
    until: float
    text: str  # the query without the date phrases


def _day_start(day: date, zone: tzinfo) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=zone).timestamp()


def _span(first: date, days: int, zone: tzinfo) -> tuple[float, float]:
    return _day_start(first, zone), _day_start(first + timedelta(days=days), zone)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(name.lower()[:3]))


def _latest(today: date, month: int, day: int) -> date | None:
    """The latest ``month``/``day`` on or before ``today`` (dates ask about the past)."""
    for year in (today.year, today.year - 1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate <= today:
            return candidate
    return None


def _weekday(today: date, name: str, *, last: bool) -> date:
    """The most recent ``name`` day before today ("on Tuesday" said on a Tuesday is today
    unless "last" was said)."""
    back = (today.weekday() - WEEKDAYS.index(name)) % 7
    if back == 0 and last:
        back = 7
    return today - timedelta(days=back)


_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:on\s+)?(\d{4})-(\d{2})-(\d{2})\b"), "iso"),
    (re.compile(rf"\b(?:on\s+)?(?:the\s+)?{_DAY}\s+of\s+({_MONTH_ALT})\b\.?", re.I), "day_month"),
    (re.compile(rf"\b(?:on\s+)?({_MONTH_ALT})\.?\s+{_DAY}\b(?:,?\s+(\d{{4}}))?", re.I),
     "month_day"),
    (re.compile(rf"\b(?:on\s+)?{_DAY}\s+({_MONTH_ALT})\b(?:,?\s+(\d{{4}}))?", re.I), "day_month"),
    (re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", re.I), "before_yesterday"),
    (re.compile(r"\b(?:on\s+)?(yesterday|today|tonight|this\s+morning)\b", re.I), "near"),
    (re.compile(rf"\b{_COUNT}\s+(day|week)s?\s+ago\b", re.I), "ago"),
    (re.compile(r"\b(last|this)\s+(week|weekend|month)\b", re.I), "period"),
    (re.compile(rf"\b(?:(last|this|on)\s+)?({'|'.join(WEEKDAYS)})(?:\s+(?:night|evening|"
                r"morning|afternoon))?\b", re.I), "weekday"),
]


def _match_span(kind: str, m: re.Match[str], today: date,
                zone: tzinfo) -> tuple[float, float] | None:
    groups = m.groups()
    if kind == "iso":
        try:
            return _span(date(int(groups[0]), int(groups[1]), int(groups[2])), 1, zone)
        except ValueError:
            return None
    if kind in ("month_day", "day_month"):
        if kind == "month_day":
            month, day, year = _month(groups[0]), int(groups[1]), groups[2]
        else:
            day, month = int(groups[0]), _month(groups[1])
            year = groups[2] if len(groups) > 2 else None
        if year:
            try:
                return _span(date(int(year), month, day), 1, zone)
            except ValueError:
                return None
        found = _latest(today, month, day)
        return _span(found, 1, zone) if found else None
    if kind == "before_yesterday":
        return _span(today - timedelta(days=2), 1, zone)
    if kind == "near":
        word = groups[0].lower()
        return _span(today - timedelta(days=1 if word == "yesterday" else 0), 1, zone)
    if kind == "ago":
        count = _NUMBERS.get(groups[0].lower()) or int(groups[0])
        days = count * (7 if groups[1].lower() == "week" else 1)
        # "three days ago" is loose: the day itself and one either side
        return _span(today - timedelta(days=days + 1), 3, zone)
    if kind == "period":
        which, unit = groups[0].lower(), groups[1].lower()
        monday = today - timedelta(days=today.weekday())
        if unit == "week":
            return _span(monday - timedelta(days=7 if which == "last" else 0), 7, zone)
        if unit == "weekend":
            saturday = monday + timedelta(days=5)
            if which == "last" or saturday > today:
                saturday -= timedelta(days=7)
            return _span(saturday, 2, zone)
        first = today.replace(day=1)
        if which == "last":
            first = (first - timedelta(days=1)).replace(day=1)
        following = (first + timedelta(days=32)).replace(day=1)
        return _day_start(first, zone), _day_start(following, zone)
    if kind == "weekday":
        last = (groups[0] or "").lower() == "last"
        return _span(_weekday(today, groups[1].lower(), last=last), 1, zone)
    return None


def resolve(text: str, now: float, zone: tzinfo = UTC) -> Window | None:
    """The span of days the query's date phrases name as of ``now`` in ``zone`` (the first
    phrase that resolves; later ones are removed too), or None when it names none."""
    today = datetime.fromtimestamp(now, zone).date()
    found: tuple[float, float] | None = None
    cleaned = text
    for pattern, kind in _PATTERNS:
        for m in list(pattern.finditer(cleaned)):
            span = _match_span(kind, m, today, zone)
            if span is None:
                continue
            found = found or span
        if found:
            cleaned = pattern.sub(" ", cleaned)
    if found is None:
        return None
    since, until = found
    if since > now:
        return None
    return Window(since=since, until=min(until, max(now, since + 1)), text=_tidy(cleaned))


def _tidy(text: str) -> str:
    return re.sub(r"\s+([?,.!])", r"\1", " ".join(text.split())).strip(" ,")
