"""Jobs and runs as text (chats, the tool, the CLI) and as JSON (``--json``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from core.scheduler.jobs import Job, Run
from core.scheduler.schedule import describe

PREVIEW = 160


def when(at: float | None, timezone: str = "UTC") -> str:
    if at is None:
        return "-"
    local = datetime.fromtimestamp(at, UTC).astimezone(ZoneInfo(timezone))
    return f"{local:%Y-%m-%d %H:%M} {timezone}"


def iso(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat()


def job_line(job: Job, last: Run | None = None) -> str:
    status = {
        "active": f"next {when(job.next_run_at, job.timezone)}",
        "paused": "paused",
        "finished": "finished",
        "removed": "removed",
    }[job.state]
    repeat = f", run {job.runs_done}/{job.repeat}" if job.repeat else ""
    latest = f"; last run {last.status}" if last is not None else ""
    return (f"{job.id} “{job.name}”: {describe(job.schedule)}{repeat}; {status}{latest}; "
            f"→ {job.target.label}")


def job_detail(job: Job) -> str:
    lines = [
        f"{job.id} “{job.name}” ({job.state})",
        f"schedule: {describe(job.schedule)} (written “{job.schedule_text}”)",
        f"next run: {when(job.next_run_at, job.timezone)}" if job.state == "active"
        else f"next run: none ({job.state})",
        f"delivers to: {job.target.label}",
        f"prompt: {_clip(job.prompt, PREVIEW)}",
    ]
    if job.repeat:
        lines.append(f"runs: {job.runs_done} of {job.repeat}")
    if job.skills:
        lines.append(f"skills: {', '.join(job.skills)}")
    if job.model:
        lines.append(f"model: {job.model}")
    return "\n".join(lines)


def run_line(run: Run, timezone: str = "UTC") -> str:
    parts = [f"{run.id} {when(run.scheduled_for, timezone)} ({run.trigger}): {run.status}"]
    if run.error:
        label = "error" if run.status == "failed" else "note"
        parts.append(f"{label}: {_clip(run.error, PREVIEW)}")
    parts.append(f"delivery: {delivery_status(run)}")
    if run.reply and run.status == "ok":
        parts.append(f"answer: {_clip(run.reply, PREVIEW)}")
    return "; ".join(parts)


def delivery_status(run: Run) -> str:
    if run.delivery is None:
        if run.status == "silent":
            return "none (silent)"
        return "none" if run.finished else "not yet"
    d = run.delivery
    extra = f" after {d.attempts} attempts" if d.attempts > 1 else ""
    error = f" ({d.last_error})" if d.last_error and d.status != "sent" else ""
    return f"{d.status}{extra}{error}"


def job_json(job: Job, last: Run | None = None) -> dict[str, Any]:
    return {
        "id": job.id, "user_id": job.user_id, "name": job.name, "state": job.state,
        "prompt": job.prompt, "schedule": describe(job.schedule),
        "schedule_text": job.schedule_text, "schedule_spec": {
            "kind": job.schedule.kind, "expr": job.schedule.expr,
            "timezone": job.schedule.timezone,
            "anchor": job.schedule.anchor.isoformat() if job.schedule.anchor else None,
        },
        "timezone": job.timezone, "deliver": job.target.label, "target": job.target.to_dict(),
        "skills": job.skills, "model": job.model, "enabled": job.enabled,
        "repeat": job.repeat, "runs_done": job.runs_done, "next_run_at": iso(job.next_run_at),
        "last_run_at": iso(job.last_run_at), "created_by": job.created_by,
        "created_at": iso(job.created_at), "last_run": run_json(last) if last else None,
    }


def run_json(run: Run) -> dict[str, Any]:
    delivery = None
    if run.delivery is not None:
        d = run.delivery
        delivery = {"status": d.status, "platform": d.platform, "attempts": d.attempts,
                    "last_error": d.last_error, "sent_at": iso(d.sent_at)}
    return {
        "id": run.id, "job_id": run.job_id, "trigger": run.trigger, "status": run.status,
        "error": run.error,
        "scheduled_for": iso(run.scheduled_for), "claimed_at": iso(run.claimed_at),
        "finished_at": iso(run.finished_at), "attempts": run.attempts,
        "session_id": run.session_id, "inbox_id": run.inbox_id, "reply": run.reply,
        "delivery_state": delivery_status(run), "delivery": delivery,
    }


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
