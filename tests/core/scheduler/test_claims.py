"""Claiming runs with a controllable clock: every schedule form, DST, one-shots, pause/resume,
repeat counts, missed ticks and runs still in progress."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.errors import IrisUsageError
from core.scheduler.jobs import CronJobs
from core.scheduler.manage import pause_job, resume_job
from core.scheduler.runs import WAITING, Claimed, claim_manual, claim_scheduled
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import (
    MINUTE,
    finish,
    make_job,
    tick_through,
    times,
    utc,
)


def resume_at(store, job, at):
    store.clock.set(at)
    return resume_job(store, job.user_id, job.id)


@pytest.mark.parametrize(
    ("schedule", "hours", "expected"),
    [
        ("*/15 * * * *", 1, [utc(2026, 11, 23, 10, m) for m in (15, 30, 45)]
         + [utc(2026, 11, 23, 11, 0)]),
        ("every 2 hours", 5, [utc(2026, 11, 23, 12), utc(2026, 11, 23, 14)]),
        ("every minute", 0.05, [utc(2026, 11, 23, 10, 1), utc(2026, 11, 23, 10, 2),
                                utc(2026, 11, 23, 10, 3)]),
        ("daily at 09:00", 48, [utc(2026, 11, 24, 9), utc(2026, 11, 25, 9)]),
        ("mondays 8:30", 24 * 14, [utc(2026, 11, 30, 8, 30), utc(2026, 12, 7, 8, 30)]),
        ("weekdays at 18:00", 24 * 7, [utc(2026, 11, d, 18) for d in (23, 24, 25, 26, 27)]),
        ("in 2 hours", 24, [utc(2026, 11, 23, 12)]),
        ("2026-11-24T07:45", 72, [utc(2026, 11, 24, 7, 45)]),
        ("2026-11-24T07:45+01:00", 72, [utc(2026, 11, 24, 6, 45)]),
    ],
)
def test_every_schedule_form_runs_at_its_times(store, settings, schedule, hours, expected):
    job = make_job(store, settings, schedule=schedule, at=NOW)
    ran = tick_through(store, settings, NOW, NOW + timedelta(hours=hours))
    assert times(ran) == expected
    runs = CronJobs(store).runs(job.user_id, job.id, limit=100)
    assert [r.scheduled_for for r in reversed(runs)] == [t.timestamp() for t in expected]


def test_a_daily_job_in_the_users_timezone(store, settings):
    user_id = store.users.for_account("http:alice")
    store.db.execute("UPDATE users SET timezone = 'America/New_York' WHERE id = ?", (user_id,))
    job = make_job(store, settings, schedule="daily at 09:00", at=NOW)
    assert job.timezone == "America/New_York"
    ran = tick_through(store, settings, NOW, NOW + timedelta(hours=30))
    assert times(ran) == [utc(2026, 11, 23, 14), utc(2026, 11, 24, 14)]  # 09:00 EST


@pytest.mark.parametrize(
    ("zone", "schedule", "start", "expected"),
    [
        # Berlin springs forward at 02:00 → 03:00 on 2026-03-29: 02:30 happens at the jump.
        ("Europe/Berlin", "daily at 02:30", utc(2026, 3, 27, 12),
         [utc(2026, 3, 28, 1, 30), utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 30)]),
        # Berlin falls back 03:00 → 02:00 on 2026-10-25: 02:30 is seen twice, runs once.
        ("Europe/Berlin", "daily at 02:30", utc(2026, 10, 23, 12),
         [utc(2026, 10, 24, 0, 30), utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)]),
        # New York springs forward at 02:00 → 03:00 on 2026-03-08.
        ("America/New_York", "daily at 02:30", utc(2026, 3, 6, 12),
         [utc(2026, 3, 7, 7, 30), utc(2026, 3, 8, 7, 0), utc(2026, 3, 9, 6, 30)]),
        # New York falls back 02:00 → 01:00 on 2026-11-01: 01:30 runs on its first pass.
        ("America/New_York", "daily at 01:30", utc(2026, 10, 30, 12),
         [utc(2026, 10, 31, 5, 30), utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)]),
    ],
)
def test_dst_changes_run_daily_jobs_once_a_day(store, settings, zone, schedule, start,
                                                expected):
    make_job(store, settings, schedule=schedule, at=start, timezone=zone)
    ran = tick_through(store, settings, start, start + timedelta(hours=72))
    assert times(ran) == expected


@pytest.mark.parametrize(
    ("zone", "start"),
    [("Europe/Berlin", utc(2026, 10, 24, 22)), ("America/New_York", utc(2026, 11, 1, 3)),
     ("Europe/Berlin", utc(2026, 3, 28, 22)), ("America/New_York", utc(2026, 3, 8, 4))],
)
def test_hourly_cron_stays_hourly_in_real_time_across_dst(store, settings, zone, start):
    make_job(store, settings, schedule="0 * * * *", at=start, timezone=zone)
    ran = times(tick_through(store, settings, start, start + timedelta(hours=6)))
    assert ran == [start + timedelta(hours=h) for h in range(1, 7)]


def test_a_one_shot_fires_once_and_finishes(store, settings):
    job = make_job(store, settings, schedule="in 5 minutes", at=NOW)
    ran = tick_through(store, settings, NOW, NOW + timedelta(days=2))
    assert times(ran) == [NOW + 5 * MINUTE]
    done = CronJobs(store).get(job.user_id, job.id)
    assert done.state == "finished" and done.next_run_at is None and done.runs_done == 1
    with pytest.raises(IrisUsageError, match="one-time job"):
        resume_at(store, job, NOW + timedelta(days=3))


def test_repeat_count_stops_the_job(store, settings):
    job = make_job(store, settings, schedule="every hour", at=NOW, repeat=3)
    ran = times(tick_through(store, settings, NOW, NOW + timedelta(hours=10)))
    assert ran == [NOW + timedelta(hours=h) for h in (1, 2, 3)]
    done = CronJobs(store).get(job.user_id, job.id)
    assert (done.state, done.runs_done, done.repeat) == ("finished", 3, 3)
    with pytest.raises(IrisUsageError, match="3 of 3"):
        resume_at(store, job, NOW + timedelta(hours=11))


def test_pause_stops_runs_and_resume_skips_the_missed_slots(store, settings):
    job = make_job(store, settings, schedule="*/10 * * * *", at=NOW)
    first = tick_through(store, settings, NOW, NOW + 25 * MINUTE)
    assert times(first) == [NOW + 10 * MINUTE, NOW + 20 * MINUTE]
    paused = pause_job(store, job.user_id, job.id)
    assert paused.state == "paused"
    assert tick_through(store, settings, NOW + 26 * MINUTE, NOW + 95 * MINUTE) == []
    resumed = resume_at(store, job, NOW + 95 * MINUTE)
    assert resumed.state == "active" and resumed.next_run_at == (NOW + 100 * MINUTE).timestamp()
    later = tick_through(store, settings, NOW + 96 * MINUTE, NOW + 125 * MINUTE)
    assert times(later) == [NOW + 100 * MINUTE, NOW + 110 * MINUTE, NOW + 120 * MINUTE]


def test_a_job_missed_while_nothing_ticked_runs_once(store, settings):
    job = make_job(store, settings, schedule="daily at 09:00", at=NOW)
    late = utc(2026, 11, 27, 15)  # four 09:00 slots went by without a tick
    ran = tick_through(store, settings, late, late)
    assert times(ran) == [late]
    (run,) = CronJobs(store).runs(job.user_id, job.id)
    assert run.scheduled_for == utc(2026, 11, 24, 9).timestamp()  # the first missed slot
    assert CronJobs(store).get(job.user_id, job.id).next_run_at == utc(2026, 11, 28, 9).timestamp()


def test_a_run_still_going_makes_the_next_one_wait_then_run_once(store, settings):
    job = make_job(store, settings, schedule="every minute", at=NOW)
    ran = tick_through(store, settings, NOW, NOW + 5 * MINUTE, complete=False)
    assert times(ran) == [NOW + MINUTE]  # minutes 2–5: the first run has not finished
    waiting = claim_scheduled(store, settings, job.user_id, job.id, at=NOW + 6 * MINUTE,
                              owner="t")
    assert waiting == WAITING
    (first,) = CronJobs(store).runs(job.user_id, job.id)
    assert first.status == "queued"
    store.inbox.finish(job.user_id, first.inbox_id, status="done", session_id=None, reply="x")
    again = tick_through(store, settings, NOW + 7 * MINUTE, NOW + 7 * MINUTE)
    assert times(again) == [NOW + 7 * MINUTE]
    assert len(CronJobs(store).runs(job.user_id, job.id)) == 2


def test_the_same_slot_is_claimed_once(store, settings):
    job = make_job(store, settings, schedule="every 5m", at=NOW)
    at = NOW + 5 * MINUTE
    first = claim_scheduled(store, settings, job.user_id, job.id, at=at, owner="a")
    second = claim_scheduled(store, settings, job.user_id, job.id, at=at, owner="b")
    assert isinstance(first, Claimed) and second is None
    assert store.db.scalar("SELECT count(*) FROM cron_runs") == 1
    assert store.db.scalar("SELECT count(*) FROM inbox WHERE platform = 'cron'") == 1


def test_a_manual_run_leaves_the_schedule_and_repeat_count_alone(store, settings):
    job = make_job(store, settings, schedule="daily at 09:00", at=NOW, repeat=2)
    pause_job(store, job.user_id, job.id)
    claimed = claim_manual(store, settings, job.user_id, job.id, owner="cli")
    finish(store, claimed)
    after = CronJobs(store).get(job.user_id, job.id)
    assert (after.state, after.runs_done, after.next_run_at) == ("paused", 0, job.next_run_at)
    (run,) = CronJobs(store).runs(job.user_id, job.id)
    assert (run.trigger, run.status) == ("manual", "ok")


def test_the_run_message_carries_the_job_and_its_target(store, settings):
    job = make_job(store, settings, schedule="every 5m", at=NOW, prompt="check the build",
                   deliver="none", model="openai/gpt-4o-mini", owner=True)
    claimed = claim_scheduled(store, settings, job.user_id, job.id, at=NOW + 5 * MINUTE,
                              owner="t")
    entry = store.inbox.get(job.user_id, claimed.inbox_id)
    assert entry.chat_key == f"cron:{job.id}" and entry.message.platform == "cron"
    assert entry.message.text.endswith("check the build")
    assert "[SILENT]" in entry.message.text and job.id in entry.message.text
    run = entry.message.cron
    assert run is not None and entry.message.meta == {}
    assert (run.model, run.run_id, run.job_id) == ("openai/gpt-4o-mini", claimed.run_id, job.id)
    assert run.target == job.target.to_dict() and run.trigger == "schedule"


def test_a_run_stored_before_runs_were_typed_still_decodes():
    """Inbox entries written by an older Iris keep their job, target and model."""
    import json

    from core.store.inbox import decode_inbound, encode_inbound

    raw = json.dumps({
        "platform": "cron", "chat_id": "job_1", "account": "cron:job_1",
        "platform_message_id": "run:r1", "text": "go", "attachments": [],
        "meta": {"cron": {"job_id": "job_1", "run_id": "r1", "name": "n", "trigger": "manual",
                          "scheduled_for": 1.0, "target": {"platform": "none"}, "notify": None},
                 "model": "openai/gpt-4o-mini"},
    })
    message = decode_inbound(raw)
    assert message.meta == {} and message.cron is not None
    assert (message.cron.job_id, message.cron.model) == ("job_1", "openai/gpt-4o-mini")
    assert decode_inbound(encode_inbound(message)) == message


def test_a_slash_command_prompt_runs_as_that_command(store, settings):
    job = make_job(store, settings, schedule="every 5m", at=NOW, prompt="/usage")
    claimed = claim_scheduled(store, settings, job.user_id, job.id, at=NOW + 5 * MINUTE,
                              owner="t")
    assert store.inbox.get(job.user_id, claimed.inbox_id).message.text == "/usage"


def test_removed_jobs_never_run_and_keep_their_history(store, settings):
    job = make_job(store, settings, schedule="every minute", at=NOW)
    tick_through(store, settings, NOW, NOW + MINUTE)
    CronJobs(store).remove(job.user_id, job.id)
    assert tick_through(store, settings, NOW + 2 * MINUTE, NOW + 10 * MINUTE) == []
    assert len(CronJobs(store).runs(job.user_id, job.id)) == 1
    assert CronJobs(store).get(job.user_id, job.id, include_removed=True).state == "removed"
