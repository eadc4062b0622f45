from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest

from core.scheduler import (
    Schedule,
    ScheduleError,
    describe,
    next_run,
    parse_schedule,
    validate_timezone,
)

NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)  # a Monday
BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"


def utc(month: int, day: int, hour: int, minute: int = 0, year: int = 2026) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def runs(schedule: Schedule, after: datetime, count: int) -> list[datetime]:
    found: list[datetime] = []
    for _ in range(count):
        following = next_run(schedule, after)
        assert following is not None, f"no run after {after}"  # only a past one-shot has none
        after = following
        found.append(after)
    return found


def tick(schedule: Schedule, start: datetime, end: datetime) -> list[datetime]:
    """Run a minute tick from start to end the way the cron function does; return run times."""
    ran, due, now = [], next_run(schedule, start), start
    while now <= end:
        if due is not None and due <= now:
            ran.append(now)
            due = next_run(schedule, now)
        now += timedelta(minutes=1)
    return ran


def cron(expr: str, timezone: str) -> Schedule:
    return parse_schedule(expr, timezone=timezone, now=utc(1, 1, 0))


@pytest.mark.parametrize(
    ("text", "kind", "expr"),
    [
        ("*/15 * * * *", "cron", "*/15 * * * *"),
        ("0 9 * * 1-5", "cron", "0 9 * * 1-5"),
        ("0 9 * * MON-FRI", "cron", "0 9 * * 1-5"),
        ("30  7 1 jan,jul sun", "cron", "30 7 1 1,7 0"),
        ("0 12 ? * *", "cron", "0 12 * * *"),
        ("@hourly", "cron", "0 * * * *"),
        ("@daily", "cron", "0 0 * * *"),
        ("@weekly", "cron", "0 0 * * 0"),
        ("@monthly", "cron", "0 0 1 * *"),
        ("every 15m", "interval", "every 15m"),
        ("every 15 minutes", "interval", "every 15m"),
        ("Every 2 Hours", "interval", "every 2h"),
        ("every 2h", "interval", "every 2h"),
        ("every 120 minutes", "interval", "every 2h"),
        ("every day", "interval", "every 1d"),
        ("every 2 weeks", "interval", "every 14d"),
        ("every minute", "interval", "every 1m"),
        ("every 90 seconds", "interval", "every 90s"),
        ("hourly", "interval", "every 1h"),
        ("daily at 09:00", "cron", "0 9 * * *"),
        ("every day at 9am", "cron", "0 9 * * *"),
        ("at 18:30", "cron", "30 18 * * *"),
        ("at noon", "cron", "0 12 * * *"),
        ("12am daily", "cron", "0 0 * * *"),
        ("weekdays at 9", "cron", "0 9 * * 1-5"),
        ("every weekday at 9:00", "cron", "0 9 * * 1-5"),
        ("weekends at 10", "cron", "0 10 * * 0,6"),
        ("mondays 8:30", "cron", "30 8 * * 1"),
        ("every monday at 8:30", "cron", "30 8 * * 1"),
        ("on tuesday and thursday at 17:00", "cron", "0 17 * * 2,4"),
        ("mon,wed,fri at 7pm", "cron", "0 19 * * 1,3,5"),
        ("monday to friday at 9", "cron", "0 9 * * 1-5"),
        ("fri-sun at 11:15", "cron", "15 11 * * 0,5,6"),
        ("9am every monday", "cron", "0 9 * * 1"),
        ("at 17:00 on Tuesday", "cron", "0 17 * * 2"),
        ("in 2 hours", "once", "2026-11-23T12:00:00Z"),
        ("in 45 minutes", "once", "2026-11-23T10:45:00Z"),
        ("in 3 days", "once", "2026-11-26T10:00:00Z"),
        ("in an hour", "once", "2026-11-23T11:00:00Z"),
        ("tomorrow at 9", "once", "2026-11-24T09:00:00Z"),
        ("at 9pm tomorrow", "once", "2026-11-24T21:00:00Z"),
        ("today at 17:00", "once", "2026-11-23T17:00:00Z"),
        ("2026-12-01T09:00", "once", "2026-12-01T09:00:00Z"),
        ("2026-12-01 09:00", "once", "2026-12-01T09:00:00Z"),
        ("2026-12-01T09:00+01:00", "once", "2026-12-01T08:00:00Z"),
        ("2026-12-01T09:00:00Z", "once", "2026-12-01T09:00:00Z"),
        ("on 2026-12-01 at 9am", "once", "2026-12-01T09:00:00Z"),
    ],
)
def test_accepted_forms_have_canonical_expressions(text, kind, expr):
    schedule = parse_schedule(f"  {text} ", now=NOW)

    assert (schedule.kind, schedule.expr, schedule.timezone) == (kind, expr, "UTC")
    assert schedule.anchor == (NOW if kind == "interval" else None)


@pytest.mark.parametrize(
    ("text", "expected_zone", "expected_expr"),
    [
        ("daily at 9 in Europe/Berlin", BERLIN, "0 9 * * *"),
        ("weekdays at 9 europe/berlin", BERLIN, "0 9 * * 1-5"),
        ("0 9 * * 1-5 America/New_York", NEW_YORK, "0 9 * * 1-5"),
        ("every 15m UTC", "UTC", "every 15m"),
        ("tomorrow at 9 in UTC", "UTC", "2026-11-24T09:00:00Z"),
    ],
)
def test_timezone_in_the_text_overrides_the_argument(text, expected_zone, expected_expr):
    schedule = parse_schedule(text, timezone="Asia/Tokyo", now=NOW)

    assert (schedule.timezone, schedule.expr) == (expected_zone, expected_expr)


def test_one_shots_without_an_offset_are_in_the_schedule_timezone():
    iso = parse_schedule("2026-12-01T09:00", timezone=BERLIN, now=NOW)
    explicit = parse_schedule("2026-12-01T09:00-05:00", timezone=BERLIN, now=NOW)

    assert iso.expr == "2026-12-01T08:00:00Z"
    assert explicit.expr == "2026-12-01T14:00:00Z"


def test_tomorrow_means_the_next_local_day():
    just_after_midnight_in_berlin = utc(11, 23, 23, 30)

    schedule = parse_schedule("tomorrow at 9", timezone=BERLIN, now=just_after_midnight_in_berlin)

    assert schedule.expr == "2026-11-25T08:00:00Z"


def test_one_shot_in_a_skipped_hour_runs_when_the_clock_jumps():
    schedule = parse_schedule("2026-03-29T02:30", timezone=BERLIN, now=utc(3, 1, 0))

    assert schedule.expr == "2026-03-29T01:00:00Z"  # 03:00 CEST


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (
            "every blue moon",
            [
                'can\'t understand schedule "every blue moon"',
                '"every 15m"',
                '"daily at 09:00"',
                '"0 9 * * 1-5"',
                "2026-12-01T09:00",
            ],
        ),
        ("", ["empty schedule", '"every 15m"']),
        ("9", ['can\'t understand schedule "9"']),
        ("every 2 days at 9", ["can't understand"]),
        ("every 30 seconds", ["too frequent", "once a minute", '"every minute"']),
        ("every 0 minutes", ["too frequent"]),
        ("every 400 days", ["longer than a year"]),
        ("61 * * * *", ['invalid cron expression "61 * * * *"', "out of range", "5 fields"]),
        ("*/30 * * * * *", ["has 6 fields", "no seconds", '"*/15 * * * *"']),
        ("0 9 31 2 *", ["never runs"]),
        ("@reboot", ['unknown cron macro "@reboot"', "@daily"]),
        ("every Monday", ['"every Monday" needs a time of day', "mondays 8:30"]),
        ("tomorrow", ["needs a time of day"]),
        ("daily at 25:00", ["no valid time of day", "at 7pm"]),
        ("at 13pm", ["no valid time of day"]),
        ("2020-01-01T09:00", ["in the past", "in 2 hours"]),
        ("today at 9", ["in the past"]),
        ("in 0 minutes", ["in the past"]),
        ("2026-02-30T09:00", ["not a valid date and time"]),
        ("daily at 9 in Mars/Olympus", ['unknown timezone "Mars/Olympus"', "Europe/Berlin"]),
        ("weekdays at 9 Europe/Bonn", ['unknown timezone "Europe/Bonn"']),
    ],
)
def test_refusals_explain_what_works(text, fragments):
    with pytest.raises(ScheduleError) as refused:
        parse_schedule(text, now=NOW)

    for fragment in fragments:
        assert fragment in str(refused.value)


def test_schedule_error_is_a_value_error():
    with pytest.raises(ValueError):
        parse_schedule("whenever", now=NOW)


def test_validate_timezone():
    assert validate_timezone("europe/berlin") == BERLIN
    assert validate_timezone(" UTC ") == "UTC"
    with pytest.raises(ScheduleError, match=r'unknown timezone "Berlin".*Europe/Berlin'):
        validate_timezone("Berlin")
    with pytest.raises(ScheduleError):
        parse_schedule("every 15m", timezone="Nowhere/Special", now=NOW)


def test_naive_datetimes_are_refused():
    schedule = parse_schedule("every 15m", now=NOW)
    with pytest.raises(ValueError):
        parse_schedule("every 15m", now=datetime(2026, 1, 1))
    with pytest.raises(ValueError):
        next_run(schedule, datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("text", "timezone", "expected"),
    [
        ("every 15m", "UTC", "every 15 minutes"),
        ("every minute", "UTC", "every minute"),
        ("every 2 hours", "UTC", "every 2 hours"),
        ("every day", "UTC", "every day"),
        ("weekly", "UTC", "every week"),
        ("every 3 weeks", "UTC", "every 3 weeks"),
        ("weekdays at 9", BERLIN, "at 09:00 on Monday–Friday (Europe/Berlin)"),
        ("daily at 18:30", "UTC", "at 18:30 every day (UTC)"),
        ("mon,wed,fri at 7pm", "UTC", "at 19:00 on Monday, Wednesday and Friday (UTC)"),
        ("weekends at 10", "UTC", "at 10:00 on Saturday and Sunday (UTC)"),
        ("*/15 * * * *", "UTC", "every 15 minutes (UTC)"),
        ("@hourly", "UTC", "every hour (UTC)"),
        ("@monthly", "UTC", "at 00:00 on day 1 of every month (UTC)"),
        ("0 9 * 6 1", "UTC", 'on cron "0 9 * 6 1" (UTC)'),
        ("2026-11-23T14:00Z", "UTC", "once at 2026-11-23 14:00 UTC"),
        ("2026-11-23T14:00Z", BERLIN, "once at 2026-11-23 15:00 Europe/Berlin"),
    ],
)
def test_describe(text, timezone, expected):
    assert describe(parse_schedule(text, timezone=timezone, now=NOW)) == expected


def test_berlin_daily_0230_on_spring_forward_runs_once_when_the_clock_jumps():
    schedule = cron("30 2 * * *", BERLIN)

    assert runs(schedule, utc(3, 27, 0), 4) == [
        utc(3, 27, 1, 30),  # 02:30 CET
        utc(3, 28, 1, 30),
        utc(3, 29, 1, 0),  # 02:30 does not exist: 03:00 CEST, the moment the clock jumps
        utc(3, 30, 0, 30),  # 02:30 CEST
    ]
    assert tick(schedule, utc(3, 28, 22), utc(3, 29, 22)) == [utc(3, 29, 1, 0)]


def test_berlin_daily_0230_on_fall_back_runs_once_on_the_first_pass():
    schedule = cron("30 2 * * *", BERLIN)

    assert runs(schedule, utc(10, 23, 0), 4) == [
        utc(10, 23, 0, 30),  # 02:30 CEST
        utc(10, 24, 0, 30),
        utc(10, 25, 0, 30),  # first 02:30 (CEST); the second one (01:30 UTC) is skipped
        utc(10, 26, 1, 30),  # 02:30 CET
    ]
    assert tick(schedule, utc(10, 24, 22), utc(10, 25, 22)) == [utc(10, 25, 0, 30)]
    assert next_run(schedule, utc(10, 25, 1, 10)) == utc(10, 26, 1, 30)  # asked at 02:10 CET


def test_new_york_daily_jobs_across_both_changes():
    at_0230 = cron("30 2 * * *", NEW_YORK)
    at_0130 = cron("30 1 * * *", NEW_YORK)

    assert runs(at_0230, utc(3, 7, 0), 3) == [
        utc(3, 7, 7, 30),  # 02:30 EST
        utc(3, 8, 7, 0),  # skipped: 03:00 EDT
        utc(3, 9, 6, 30),  # 02:30 EDT
    ]
    assert runs(at_0230, utc(10, 31, 0), 3) == [
        utc(10, 31, 6, 30),
        utc(11, 1, 7, 30),
        utc(11, 2, 7, 30),
    ]
    assert runs(at_0130, utc(10, 31, 0), 3) == [
        utc(10, 31, 5, 30),  # 01:30 EDT
        utc(11, 1, 5, 30),  # the first 01:30 only
        utc(11, 2, 6, 30),  # 01:30 EST
    ]
    assert tick(at_0130, utc(11, 1, 0), utc(11, 1, 23)) == [utc(11, 1, 5, 30)]


@pytest.mark.parametrize("timezone", [BERLIN, NEW_YORK])
def test_a_nine_oclock_job_stays_at_nine_local_across_changes(timezone):
    schedule = cron("0 9 * * *", timezone)

    spring = runs(schedule, utc(3, 5, 0), 30)
    autumn = runs(schedule, utc(10, 20, 0), 20)

    for run in spring + autumn:
        assert run.astimezone(ZoneInfo(timezone)).time().isoformat() == "09:00:00"
    assert len({run.hour for run in spring}) == 2  # the UTC time shifts by an hour


def test_weekday_0900_in_berlin_shifts_its_utc_time_with_dst():
    schedule = parse_schedule("weekdays at 9", timezone=BERLIN, now=utc(3, 1, 0))

    assert runs(schedule, utc(3, 27, 0), 2) == [utc(3, 27, 8), utc(3, 30, 7)]
    assert runs(schedule, utc(10, 23, 0), 2) == [utc(10, 23, 7), utc(10, 26, 8)]


def test_berlin_hourly_stays_hourly_in_real_time():
    schedule = cron("@hourly", BERLIN)

    assert runs(schedule, utc(3, 28, 22, 30), 4) == [
        utc(3, 28, 23),  # 00:00 CET
        utc(3, 29, 0),  # 01:00 CET
        utc(3, 29, 1),  # 03:00 CEST; 02:00 never happened
        utc(3, 29, 2),
    ]
    assert runs(schedule, utc(10, 24, 22, 30), 5) == [
        utc(10, 24, 23),  # 01:00 CEST
        utc(10, 25, 0),  # 02:00 CEST
        utc(10, 25, 1),  # 02:00 CET, the repeated hour
        utc(10, 25, 2),  # 03:00 CET
        utc(10, 25, 3),
    ]


def test_new_york_hourly_stays_hourly_in_real_time():
    schedule = cron("0 * * * *", NEW_YORK)

    assert runs(schedule, utc(3, 8, 5, 30), 3) == [utc(3, 8, 6), utc(3, 8, 7), utc(3, 8, 8)]
    assert runs(schedule, utc(11, 1, 4, 30), 4) == [
        utc(11, 1, 5),  # 01:00 EDT
        utc(11, 1, 6),  # 01:00 EST
        utc(11, 1, 7),
        utc(11, 1, 8),
    ]


@pytest.mark.parametrize(
    ("timezone", "start"),
    [
        (BERLIN, utc(3, 28, 12)),
        (BERLIN, utc(10, 24, 12)),
        (NEW_YORK, utc(3, 7, 18)),
        (NEW_YORK, utc(10, 31, 18)),
    ],
)
@pytest.mark.parametrize(("expr", "step"), [("@hourly", 60), ("*/15 * * * *", 15)])
def test_frequent_cron_jobs_keep_real_time_spacing_across_changes(timezone, start, expr, step):
    ran = tick(cron(expr, timezone), start, start + timedelta(hours=24))

    assert ran[0] - start <= timedelta(minutes=step)
    assert {later - earlier for earlier, later in pairwise(ran)} == {timedelta(minutes=step)}
    assert len(ran) == 24 * 60 // step


def test_berlin_every_15m_cron_across_both_changes_exactly():
    schedule = cron("*/15 * * * *", BERLIN)

    assert runs(schedule, utc(3, 29, 0, 30), 4) == [
        utc(3, 29, 0, 45),  # 01:45 CET
        utc(3, 29, 1, 0),  # 03:00 CEST
        utc(3, 29, 1, 15),
        utc(3, 29, 1, 30),
    ]
    assert runs(schedule, utc(10, 25, 0, 50), 6) == [
        utc(10, 25, 1, 0),  # 02:00 CET, second pass
        utc(10, 25, 1, 15),
        utc(10, 25, 1, 30),
        utc(10, 25, 1, 45),
        utc(10, 25, 2, 0),  # 03:00 CET
        utc(10, 25, 2, 15),
    ]


def test_every_15m_interval_counts_real_time_across_changes():
    schedule = parse_schedule("every 15m", timezone=BERLIN, now=utc(3, 29, 0, 40))

    assert runs(schedule, utc(3, 29, 0, 40), 3) == [
        utc(3, 29, 0, 55),
        utc(3, 29, 1, 10),
        utc(3, 29, 1, 25),
    ]


def test_every_day_interval_is_24_real_hours_so_local_time_moves_with_dst():
    schedule = parse_schedule("every day", timezone=BERLIN, now=utc(3, 28, 8))

    assert next_run(schedule, utc(3, 28, 8)) == utc(3, 29, 8)  # 09:00 CET → 10:00 CEST


def test_interval_catches_up_once_after_a_long_gap():
    schedule = parse_schedule("every 15m", now=NOW)

    assert next_run(schedule, NOW) == NOW + timedelta(minutes=15)
    assert next_run(schedule, NOW + timedelta(minutes=15)) == NOW + timedelta(minutes=30)
    assert next_run(schedule, NOW - timedelta(hours=1)) == NOW

    late = NOW + timedelta(hours=5, minutes=7)
    due = next_run(schedule, late)
    assert due == NOW + timedelta(hours=5, minutes=15)
    assert next_run(schedule, due) == due + timedelta(minutes=15)


def test_missed_ticks_run_an_interval_job_once():
    schedule = parse_schedule("every 15m", now=NOW)
    due = next_run(schedule, NOW)
    outage_over = NOW + timedelta(hours=3, minutes=1)

    ran = []
    for now in (NOW + timedelta(minutes=1), outage_over, outage_over + timedelta(minutes=1)):
        if due <= now:
            ran.append(now)
            due = next_run(schedule, now)

    assert ran == [outage_over]
    assert due == NOW + timedelta(hours=3, minutes=15)


def test_one_shot_runs_once():
    schedule = parse_schedule("in 2 hours", now=NOW)
    at = NOW + timedelta(hours=2)

    assert next_run(schedule, NOW) == at
    assert next_run(schedule, at - timedelta(seconds=1)) == at
    assert next_run(schedule, at) is None
    assert next_run(schedule, at + timedelta(days=1)) is None
    assert tick(schedule, NOW, NOW + timedelta(hours=5)) == [at]


def test_cron_next_run_is_strictly_after():
    schedule = parse_schedule("daily at 09:00", now=NOW)

    assert next_run(schedule, utc(11, 24, 9)) == utc(11, 25, 9)
    assert next_run(schedule, utc(11, 24, 8, 59)) == utc(11, 24, 9)


@pytest.mark.parametrize(
    "text",
    ["every 15m", "mondays 8:30 Europe/Berlin", "0 9 * * 1-5", "in 2 hours", "@monthly"],
)
def test_json_round_trip(text):
    now = NOW + timedelta(microseconds=123456)
    schedule = parse_schedule(text, now=now)

    restored = Schedule.from_json(schedule.to_json())

    assert restored == schedule
    assert next_run(restored, now) == next_run(schedule, now)


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[]",
        '{"kind": "cron", "expr": "0 9 * * *"}',
        '{"kind": "cron", "expr": "0 9 * * * *", "timezone": "UTC", "anchor": null}',
        '{"kind": "cron", "expr": "0 9 * * *", "timezone": "Mars/Base", "anchor": null}',
        '{"kind": "interval", "expr": "every 15m", "timezone": "UTC", "anchor": null}',
        '{"kind": "interval", "expr": "15m", "timezone": "UTC", "anchor": "2026-01-01T00:00Z"}',
        '{"kind": "once", "expr": "tomorrow", "timezone": "UTC", "anchor": null}',
        '{"kind": "yearly", "expr": "x", "timezone": "UTC", "anchor": null}',
    ],
)
def test_from_json_refuses_broken_records(raw):
    with pytest.raises(ScheduleError):
        Schedule.from_json(raw)
