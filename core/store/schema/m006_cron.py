"""Scheduled automations: jobs and their runs, per user.

A run is claimed once per (job, scheduled instant): the unique key is what keeps two ticks from
running one slot twice. A run's outcome lives on its inbox entry and its delivery row.
"""

from __future__ import annotations

from core.store.db import Database


def migrate(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE cron_jobs (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            prompt TEXT NOT NULL,
            schedule TEXT NOT NULL,
            schedule_text TEXT NOT NULL,
            timezone TEXT NOT NULL,
            target TEXT NOT NULL,
            skills TEXT NOT NULL DEFAULT '[]',
            model TEXT,
            enabled INTEGER NOT NULL DEFAULT 1,
            repeat INTEGER,
            runs_done INTEGER NOT NULL DEFAULT 0,
            next_run_at REAL,
            last_run_at REAL,
            created_by TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            removed_at REAL
        );
        CREATE INDEX cron_jobs_user ON cron_jobs(user_id, created_at);
        CREATE INDEX cron_jobs_due ON cron_jobs(next_run_at)
            WHERE enabled = 1 AND removed_at IS NULL;

        CREATE TABLE cron_runs (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            job_id TEXT NOT NULL REFERENCES cron_jobs(id),
            scheduled_for REAL NOT NULL,
            trigger TEXT NOT NULL,
            claimed_by TEXT NOT NULL,
            claimed_at REAL NOT NULL,
            inbox_id INTEGER,
            error TEXT,
            UNIQUE (job_id, scheduled_for)
        );
        CREATE INDEX cron_runs_job ON cron_runs(user_id, job_id, scheduled_for);
        """
    )
