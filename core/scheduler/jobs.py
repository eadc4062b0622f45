"""Cron jobs and runs as the scheduler sees them (schedules, targets, run states), read from and
written to the store's rows (``core.store.cron``). Every method touching a job takes its owner's
user id; the tick's ``due`` sweep and the operator's ``owner_of`` return keys only."""

from __future__ import annotations

import builtins
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.errors import IrisUsageError, NotFound
from core.scheduler.schedule import Schedule
from core.scheduler.targets import Target
from core.store.cron import UPDATABLE
from core.store.db import Row

if TYPE_CHECKING:
    from core.store import Store



def instant(at: float | None) -> datetime | None:
    return None if at is None else datetime.fromtimestamp(at, UTC)


@dataclass(frozen=True)
class Job:
    id: str
    user_id: str
    name: str
    prompt: str
    schedule: Schedule
    schedule_text: str
    timezone: str
    target: Target
    skills: list[str]
    model: str | None
    enabled: bool
    repeat: int | None
    runs_done: int
    next_run_at: float | None
    last_run_at: float | None
    created_by: str
    created_at: float
    updated_at: float
    removed_at: float | None

    @property
    def state(self) -> str:
        if self.removed_at is not None:
            return "removed"
        if not self.enabled:
            return "paused"
        return "active" if self.next_run_at is not None else "finished"

    @property
    def chat_key(self) -> str:
        return f"cron:{self.id}"

    @classmethod
    def from_row(cls, row: Row) -> Job:
        return cls(
            id=row["id"], user_id=row["user_id"], name=row["name"], prompt=row["prompt"],
            schedule=Schedule.from_json(row["schedule"]), schedule_text=row["schedule_text"],
            timezone=row["timezone"], target=Target.from_json(row["target"]),
            skills=json.loads(row["skills"] or "[]"), model=row["model"],
            enabled=bool(row["enabled"]), repeat=row["repeat"], runs_done=row["runs_done"],
            next_run_at=row["next_run_at"], last_run_at=row["last_run_at"],
            created_by=row["created_by"], created_at=row["created_at"],
            updated_at=row["updated_at"], removed_at=row["removed_at"],
        )


@dataclass(frozen=True)
class DeliveryState:
    status: str  # pending | sent | failed
    platform: str
    attempts: int
    last_error: str | None
    sent_at: float | None
    next_attempt_at: float | None = None  # while pending: when it is tried again


@dataclass(frozen=True)
class Run:
    """A run and what became of it: its inbox entry (the turn) and its delivery."""

    id: str
    user_id: str
    job_id: str
    scheduled_for: float
    trigger: str  # schedule | manual
    claimed_at: float
    inbox_id: int | None
    error: str | None
    inbox_status: str | None = None
    attempts: int = 0
    reply: str | None = None
    session_id: str | None = None
    finished_at: float | None = None
    delivery: DeliveryState | None = None

    @property
    def silent(self) -> bool:
        from core.scheduler.outbound import is_silent

        return self.inbox_status == "done" and is_silent(self.reply or "")

    @property
    def status(self) -> str:
        """queued | running | ok | silent | failed | cancelled"""
        if self.inbox_status is None or self.inbox_status == "pending":
            return "running" if self.attempts else "queued"
        if self.inbox_status == "done":
            return "silent" if self.silent else "ok"
        return self.inbox_status

    @property
    def finished(self) -> bool:
        return self.status not in ("queued", "running")


class CronJobs:
    """A user's jobs and runs as the scheduler sees them, over the store's rows
    (``store.cron``)."""

    def __init__(self, store: Store):
        self.rows = store.cron

    def create(
        self, user_id: str, *, name: str, prompt: str, schedule: Schedule, schedule_text: str,
        target: Target, skills: list[str], model: str | None, repeat: int | None,
        next_run_at: float | None, created_by: str,
    ) -> Job:
        values = {
            "name": name, "prompt": prompt, "schedule": schedule.to_json(),
            "schedule_text": schedule_text, "timezone": schedule.timezone,
            "target": target.to_json(), "skills": json.dumps(skills), "model": model,
            "repeat": repeat, "next_run_at": next_run_at, "created_by": created_by,
        }
        for _ in range(5):
            job_id = f"job_{secrets.token_hex(4)}"
            if self.rows.insert_job(user_id, job_id, values):
                return self.get(user_id, job_id)
        raise RuntimeError("could not allocate a job id")

    def get(self, user_id: str, ref: str, *, include_removed: bool = False) -> Job:
        """A job by id or (case-insensitive) name."""
        ref = ref.strip()
        row = self.rows.job_row(user_id, ref)
        if row is None:
            rows = self.rows.job_rows_named(user_id, ref)
            if len(rows) > 1:
                ids = ", ".join(r["id"] for r in rows)
                raise IrisUsageError(f"{len(rows)} jobs are named {ref!r} ({ids}); use an id")
            row = rows[0] if rows else None
        if row is None or (row["removed_at"] is not None and not include_removed):
            raise NotFound(f"no job {ref!r} (list them with /cron or `iris cron list`)")
        return Job.from_row(row)

    def list(self, user_id: str, *, include_removed: bool = False) -> builtins.list[Job]:
        rows = self.rows.job_rows(user_id, include_removed=include_removed)
        return [Job.from_row(row) for row in rows]

    def count(self, user_id: str) -> int:
        return self.rows.count_jobs(user_id)

    def update(self, user_id: str, job_id: str, **changes: Any) -> Job:
        unknown = set(changes) - UPDATABLE
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        encoded = {k: _encode(k, v) for k, v in changes.items()}
        if "schedule" in changes:
            encoded["timezone"] = changes["schedule"].timezone
        if not self.rows.update_job(user_id, job_id, encoded):
            raise NotFound(f"no job {job_id!r}")
        return self.get(user_id, job_id)

    def remove(self, user_id: str, job_id: str) -> Job:
        """Retire a job: it never runs again; it and its run history stay readable."""
        if not self.rows.retire_job(user_id, job_id):
            raise NotFound(f"no job {job_id!r}")
        return self.get(user_id, job_id, include_removed=True)

    def advance(
        self, user_id: str, job_id: str, *, expected: float, next_run_at: float | None,
        runs_done: int, last_run_at: float,
    ) -> bool:
        """Compare-and-set the next run: only the claimant that saw ``expected`` moves it on."""
        return self.rows.advance_job(user_id, job_id, expected=expected, next_run_at=next_run_at,
                                     runs_done=runs_done, last_run_at=last_run_at)

    def due(self, at: float, *, limit: int = 500) -> builtins.list[tuple[str, str]]:
        """System sweep: (user_id, job_id) of enabled jobs whose next run is at or before ``at``,
        earliest first. Keys only."""
        return self.rows.due_jobs(at, limit=limit)

    def owner_of(self, job_id: str) -> str | None:
        """Operator lookup (``iris cron pause JOB``): the owning user's id, nothing else."""
        return self.rows.job_owner(job_id.strip())

    def add_run(
        self, user_id: str, job_id: str, *, scheduled_for: float, trigger: str, owner: str,
    ) -> str | None:
        """Record a claimed run; None when this (job, instant) was claimed already."""
        run_id = f"run_{secrets.token_hex(6)}"
        claimed = self.rows.insert_run(user_id, job_id, run_id, scheduled_for=scheduled_for,
                                       trigger=trigger, owner=owner)
        return run_id if claimed else None

    def attach_inbox(self, user_id: str, run_id: str, inbox_id: int) -> None:
        self.rows.attach_inbox(user_id, run_id, inbox_id)

    def note(self, user_id: str, run_id: str, text: str) -> None:
        """A note on a run not started yet (its dispatch failed: the sweeper starts it)."""
        self.rows.note_run(user_id, run_id, text)

    def unfinished_run(self, user_id: str, job_id: str) -> str | None:
        """The id of a run of this job whose turn has not finished yet, if any."""
        return self.rows.unfinished_run(user_id, job_id)

    def runs(self, user_id: str, job_id: str, *, limit: int = 20) -> builtins.list[Run]:
        """The job's latest runs, newest first, with their turn and delivery state."""
        return [_run(row) for row in self.rows.run_rows(user_id, job_id, limit=limit)]

    def recent_runs(self, user_id: str, *, limit: int = 20) -> builtins.list[Run]:
        """The latest runs of all the user's jobs, newest first."""
        return [_run(row) for row in self.rows.recent_run_rows(user_id, limit=limit)]

    def run(self, user_id: str, run_id: str) -> Run:
        row = self.rows.run_row(user_id, run_id)
        if row is None:
            raise NotFound(f"no run {run_id!r}")
        return _run(row)

    def last_runs(self, user_id: str) -> dict[str, Run]:
        """Each of the user's jobs' latest run, by job id."""
        return {row["job_id"]: _run(row) for row in self.rows.last_run_rows(user_id)}


def _run(row: Row) -> Run:
    delivery = None
    if row["d_status"] is not None:
        delivery = DeliveryState(status=row["d_status"], platform=row["d_platform"],
                                 attempts=row["d_attempts"], last_error=row["d_error"],
                                 sent_at=row["d_sent_at"], next_attempt_at=row["d_next"])
    return Run(
        id=row["id"], user_id=row["user_id"], job_id=row["job_id"],
        scheduled_for=row["scheduled_for"], trigger=row["trigger"],
        claimed_at=row["claimed_at"], inbox_id=row["inbox_id"],
        error=row["error"] if row["inbox_status"] in (None, "pending") else row["inbox_error"],
        inbox_status=row["inbox_status"],
        attempts=row["inbox_attempts"] or 0, reply=row["inbox_reply"],
        session_id=row["inbox_session"], finished_at=row["inbox_done_at"], delivery=delivery,
    )


def _encode(name: str, value: Any) -> Any:
    if name == "schedule":
        return value.to_json()
    if name == "target":
        return value.to_json()
    if name == "skills":
        return json.dumps(list(value))
    if name == "enabled":
        return int(bool(value))
    return value
