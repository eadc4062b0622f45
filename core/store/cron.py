"""Scheduled jobs and their runs (``cron_jobs``, ``cron_runs``) as rows. Schedules, targets and
what a run's state means are ``core.scheduler``'s; this module only reads and writes rows
whose JSON columns arrive encoded. Every method touching a job takes its owner's user id; the
tick's ``due_jobs`` sweep and the operator's ``job_owner`` return keys only, never content."""

from __future__ import annotations

from typing import Any, cast

from core.store.db import Database, Row

JOB_COLUMNS = (
    "name", "prompt", "schedule", "schedule_text", "timezone", "target", "skills", "model",
    "repeat", "next_run_at", "created_by",
)
UPDATABLE = frozenset({
    "name", "prompt", "schedule", "schedule_text", "timezone", "target", "skills", "model",
    "repeat", "runs_done", "next_run_at", "enabled",
})
RUN_SELECT = (
    "SELECT r.*, i.status AS inbox_status, i.attempts AS inbox_attempts, i.reply AS inbox_reply,"
    " i.session_id AS inbox_session, i.done_at AS inbox_done_at, i.error AS inbox_error,"
    " d.status AS d_status, d.platform AS d_platform, d.attempts AS d_attempts,"
    " d.last_error AS d_error, d.sent_at AS d_sent_at, d.next_attempt_at AS d_next"
    " FROM cron_runs r"
    " LEFT JOIN inbox i ON i.id = r.inbox_id AND i.user_id = r.user_id"
    " LEFT JOIN deliveries d ON d.source = 'inbox:' || r.inbox_id AND d.user_id = r.user_id"
)


class CronTables:
    def __init__(self, db: Database):
        self.db = db

    # -- jobs ----------------------------------------------------------------------------

    def insert_job(self, user_id: str, job_id: str, values: dict[str, Any]) -> bool:
        """Insert a job with the columns of ``JOB_COLUMNS``; False when the id is taken."""
        at = self.db.clock.now()
        marks = ", ".join("?" for _ in range(len(JOB_COLUMNS) + 4))
        row = self.db.one(
            f"INSERT INTO cron_jobs (id, user_id, {', '.join(JOB_COLUMNS)}, created_at,"
            f" updated_at) VALUES ({marks}) ON CONFLICT (id) DO NOTHING RETURNING id",
            (job_id, user_id, *(values[c] for c in JOB_COLUMNS), at, at),
        )
        return row is not None

    def job_row(self, user_id: str, job_id: str) -> Row | None:
        return self.db.one(
            "SELECT * FROM cron_jobs WHERE user_id = ? AND id = ?", (user_id, job_id)
        )

    def job_rows_named(self, user_id: str, name: str) -> list[Row]:
        """Jobs not removed whose name matches ``name`` case-insensitively, oldest first."""
        return self.db.query(
            "SELECT * FROM cron_jobs WHERE user_id = ? AND lower(name) = lower(?)"
            " AND removed_at IS NULL ORDER BY created_at",
            (user_id, name),
        )

    def job_rows(self, user_id: str, *, include_removed: bool = False) -> list[Row]:
        removed = "" if include_removed else " AND removed_at IS NULL"
        return self.db.query(
            f"SELECT * FROM cron_jobs WHERE user_id = ?{removed} ORDER BY created_at", (user_id,)
        )

    def count_jobs(self, user_id: str) -> int:
        return int(self.db.scalar(
            "SELECT count(*) FROM cron_jobs WHERE user_id = ? AND removed_at IS NULL", (user_id,)
        ))

    def update_job(self, user_id: str, job_id: str, values: dict[str, Any]) -> bool:
        """Set encoded column values on a job not removed; False when there is none."""
        unknown = set(values) - UPDATABLE
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        sets = ", ".join(f"{name} = ?" for name in values)
        return self.db.execute(
            f"UPDATE cron_jobs SET {sets}, updated_at = ? WHERE user_id = ? AND id = ?"
            " AND removed_at IS NULL",
            (*values.values(), self.db.clock.now(), user_id, job_id),
        ) == 1

    def retire_job(self, user_id: str, job_id: str) -> bool:
        at = self.db.clock.now()
        return self.db.execute(
            "UPDATE cron_jobs SET removed_at = ?, enabled = 0, updated_at = ?"
            " WHERE user_id = ? AND id = ? AND removed_at IS NULL",
            (at, at, user_id, job_id),
        ) == 1

    def advance_job(
        self, user_id: str, job_id: str, *, expected: float, next_run_at: float | None,
        runs_done: int, last_run_at: float,
    ) -> bool:
        """Compare-and-set the next run: only the claimant that saw ``expected`` moves it on."""
        return self.db.execute(
            "UPDATE cron_jobs SET next_run_at = ?, runs_done = ?, last_run_at = ?"
            " WHERE user_id = ? AND id = ? AND next_run_at = ? AND enabled = 1"
            " AND removed_at IS NULL",
            (next_run_at, runs_done, last_run_at, user_id, job_id, expected),
        ) == 1

    def due_jobs(self, at: float, *, limit: int) -> list[tuple[str, str]]:
        """System sweep: (user_id, job_id) of enabled jobs whose next run is at or before
        ``at``, earliest first. Keys only."""
        rows = self.db.query(
            "SELECT user_id, id FROM cron_jobs WHERE enabled = 1 AND removed_at IS NULL"
            " AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at LIMIT ?",
            (at, limit),
        )
        return [(row["user_id"], row["id"]) for row in rows]

    def job_owner(self, job_id: str) -> str | None:
        """Operator lookup: the owning user's id, nothing else."""
        return cast("str | None", self.db.scalar("SELECT user_id FROM cron_jobs WHERE id = ?",
                                                 (job_id,)))

    # -- runs ----------------------------------------------------------------------------

    def insert_run(
        self, user_id: str, job_id: str, run_id: str, *, scheduled_for: float, trigger: str,
        owner: str,
    ) -> bool:
        """Record a claimed run; False when this (job, instant) was claimed already."""
        row = self.db.one(
            "INSERT INTO cron_runs (id, user_id, job_id, scheduled_for, trigger, claimed_by,"
            " claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (job_id, scheduled_for) DO NOTHING RETURNING id",
            (run_id, user_id, job_id, scheduled_for, trigger, owner, self.db.clock.now()),
        )
        return row is not None

    def attach_inbox(self, user_id: str, run_id: str, inbox_id: int) -> None:
        self.db.execute(
            "UPDATE cron_runs SET inbox_id = ? WHERE user_id = ? AND id = ?",
            (inbox_id, user_id, run_id),
        )

    def note_run(self, user_id: str, run_id: str, text: str) -> None:
        self.db.execute(
            "UPDATE cron_runs SET error = ? WHERE user_id = ? AND id = ?", (text, user_id, run_id)
        )

    def unfinished_run(self, user_id: str, job_id: str) -> str | None:
        """The id of a run of this job whose turn has not finished yet, if any."""
        return cast("str | None", self.db.scalar(
            "SELECT r.id FROM cron_runs r JOIN inbox i ON i.id = r.inbox_id"
            " WHERE r.user_id = ? AND r.job_id = ? AND i.user_id = r.user_id"
            " AND i.status = 'pending' ORDER BY r.scheduled_for LIMIT 1",
            (user_id, job_id),
        ))

    def run_rows(self, user_id: str, job_id: str, *, limit: int) -> list[Row]:
        """The job's latest runs with their inbox and delivery columns, newest first."""
        return self.db.query(
            f"{RUN_SELECT} WHERE r.user_id = ? AND r.job_id = ?"
            " ORDER BY r.scheduled_for DESC, r.claimed_at DESC LIMIT ?",
            (user_id, job_id, limit),
        )

    def recent_run_rows(self, user_id: str, *, limit: int) -> list[Row]:
        return self.db.query(
            f"{RUN_SELECT} WHERE r.user_id = ? ORDER BY r.claimed_at DESC LIMIT ?",
            (user_id, limit),
        )

    def run_row(self, user_id: str, run_id: str) -> Row | None:
        return self.db.one(f"{RUN_SELECT} WHERE r.user_id = ? AND r.id = ?", (user_id, run_id))

    def last_run_rows(self, user_id: str) -> list[Row]:
        """Each of the user's jobs' latest run."""
        return self.db.query(
            f"{RUN_SELECT} WHERE r.user_id = ? AND r.claimed_at = (SELECT max(claimed_at)"
            " FROM cron_runs x WHERE x.user_id = r.user_id AND x.job_id = r.job_id)",
            (user_id,),
        )
