"""Hermes' scheduled jobs (``cron/jobs.json``) as Iris jobs.

Taken: the schedule (cron expressions, ``every N`` intervals, one-shots; in the home's
``timezone`` from config.yaml, else Iris' default), prompt, skills (those the user has after
the skills import), model, delivery target (the chat of ``origin``, ``telegram[:chat]``,
``slack[:channel]``, ``local``), paused state and repeat counts. A job Iris cannot express is
refused with the reason: script jobs (``script``/``no_agent``: Iris runs no host scripts),
chained context (``context_from``), a one-shot whose time has passed. Job ids are derived from
Hermes' ids, so a second run adds nothing twice."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.scheduler.schedule import Schedule, ScheduleError, next_run, parse_schedule
from core.scheduler.targets import NO_TARGET, Target

if TYPE_CHECKING:
    from core.migrate.context import ImportContext
    from core.migrate.hermes_people import People

MAX_PROMPT = 20_000


class Unsupported(Exception):
    """This job cannot be an Iris job; the message says why."""


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def schedule_of(job: dict[str, Any], zone: str, now: datetime) -> tuple[Schedule, str]:
    raw = job.get("schedule")
    if isinstance(raw, str):
        raw = {"kind": "cron", "expr": raw} if len(raw.split()) >= 5 else {"kind": "text",
                                                                         "expr": raw}
    if not isinstance(raw, dict):
        raise Unsupported("no schedule")
    kind = raw.get("kind")
    try:
        if kind == "cron":
            expr = str(raw.get("expr") or "")
            return parse_schedule(expr, timezone=zone, now=now), expr
        if kind == "interval":
            minutes = int(raw.get("minutes") or 0)
            text = f"every {minutes}m"
            parsed = parse_schedule(text, timezone=zone, now=now)
            last = _instant(job.get("last_run_at")) or _instant(job.get("created_at"))
            anchor = (last or now).astimezone(UTC).replace(second=0, microsecond=0)
            return Schedule("interval", parsed.expr, parsed.timezone, anchor=anchor), text
        if kind == "once":
            at = _instant(raw.get("run_at"))
            if at is None:
                raise Unsupported(f"one-shot time {raw.get('run_at')!r} is not ISO-8601")
            if job.get("last_run_at"):
                raise Unsupported("a one-shot that already ran")
            if at <= now:
                raise Unsupported(f"a one-shot for {at:%Y-%m-%d %H:%M} UTC, already past")
            text = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            return parse_schedule(text, timezone=zone, now=now), text
        if kind == "text":
            text = str(raw.get("expr"))
            return parse_schedule(text, timezone=zone, now=now), text
    except (ScheduleError, ValueError, TypeError) as exc:
        raise Unsupported(f"schedule not understood ({exc})") from None
    raise Unsupported(f"schedule kind {kind!r} has no Iris equivalent")


class JobImporter:
    def __init__(self, ctx: ImportContext, people: People, zone: str):
        self.ctx, self.people, self.zone = ctx, people, zone

    def run(self) -> None:
        ctx, report = self.ctx, self.ctx.report
        path = ctx.home / "cron" / "jobs.json"
        if not path.is_file():
            report.skipped("jobs", "cron/jobs.json: not present")
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            jobs = data.get("jobs", []) if isinstance(data, dict) else data
            if not isinstance(jobs, list):
                raise ValueError("no job list")
        except (OSError, ValueError) as exc:
            report.refused("jobs", f"cron/jobs.json: unreadable ({exc})")
            return
        known = ctx.store.imports.records(ctx.user_id, ctx.source, "job")
        for job in jobs:
            if not isinstance(job, dict) or not job.get("id"):
                report.refused("jobs", "a job without an id")
                continue
            label = f"{job.get('name') or job['id']} ({job['id']})"
            if str(job["id"]) in known:
                report.count("jobs", "jobs already imported")
                continue
            try:
                self._one(job, label)
            except Unsupported as exc:
                report.refused("jobs", f"{label}: {exc}")

    def _one(self, job: dict[str, Any], label: str) -> None:
        ctx, report = self.ctx, self.ctx.report
        if job.get("no_agent") or job.get("script"):
            raise Unsupported("runs a script on the host; Iris jobs run the model, never host "
                              "scripts (recreate it as a prompt, or run the script elsewhere)")
        if job.get("context_from"):
            raise Unsupported("feeds another job's output into its prompt (context_from); "
                              "Iris jobs have no chaining")
        found = job.get("repeat")
        repeat: dict[str, Any] = found if isinstance(found, dict) else {}
        times, done = repeat.get("times"), int(repeat.get("completed") or 0)
        if isinstance(times, int) and times > 0 and done >= times:
            report.skipped("jobs", f"{label}: finished ({done} of {times} runs)")
            return
        now = ctx.store.clock.utcnow()
        schedule, text = schedule_of(job, self.zone, now)
        notes: list[str] = []
        skills = self._skills(job, notes)
        prompt = str(job.get("prompt") or "").strip()
        if not prompt:
            if not skills:
                raise Unsupported("no prompt and no skill to run")
            prompt = f"Follow the skill{'s' if len(skills) > 1 else ''} {', '.join(skills)}."
        if len(prompt) > MAX_PROMPT:
            raise Unsupported(f"a {len(prompt):,}-character prompt (Iris takes {MAX_PROMPT:,})")
        target = self._target(job, notes)
        model = self._model(job, notes)
        for key, why in (("workdir", "a working directory"), ("enabled_toolsets", "toolsets")):
            if job.get(key):
                notes.append(f"{why} ({key}) not carried over")
        paused = job.get("enabled") is False or job.get("state") == "paused"
        upcoming = next_run(schedule, now)
        name = self._name(str(job.get("name") or prompt[:40]).strip() or "Hermes job")
        job_id = "job_" + ctx.stable_id("j", str(job["id"]))[2:14]
        line = (f"{label}: {text} -> {job_id}, delivers to {target.label}"
                + (", paused" if paused else "") + (f"; {'; '.join(notes)}" if notes else ""))
        report.taken("jobs", line)
        report.count("jobs", "jobs")
        if ctx.dry_run:
            return
        values = {
            "name": name, "prompt": prompt, "schedule": schedule.to_json(),
            "schedule_text": text, "timezone": schedule.timezone, "target": target.to_json(),
            "skills": json.dumps(skills), "model": model,
            "repeat": times if isinstance(times, int) and times > 0 else None,
            "next_run_at": None if upcoming is None else upcoming.timestamp(),
            "created_by": "import-hermes",
        }
        with ctx.store.transaction():
            if not ctx.store.cron.insert_job(ctx.user_id, job_id, values):
                raise Unsupported(f"job id {job_id} is already taken")
            changes: dict[str, Any] = {}
            if done:
                changes["runs_done"] = done
            if paused:
                changes["enabled"] = 0
            if changes:
                ctx.store.cron.update_job(ctx.user_id, job_id, changes)
            ctx.store.imports.remember(ctx.user_id, ctx.source, "job", str(job["id"]), job_id)

    def _name(self, wanted: str) -> str:
        name = " ".join(wanted.split())[:70]
        if name.startswith(("job_", "run_")):
            name = f"hermes {name}"
        taken = {r["name"].lower() for r in self.ctx.store.cron.job_rows(self.ctx.user_id)}
        base, n = name, 2
        while name.lower() in taken:
            name, n = f"{base} ({n})", n + 1
        return name

    def _skills(self, job: dict[str, Any], notes: list[str]) -> list[str]:
        names = job.get("skills") or ([job["skill"]] if job.get("skill") else [])
        if not isinstance(names, list):
            return []
        from core.skills.library import SkillLibrary

        library = SkillLibrary(self.ctx.store, self.ctx.settings)
        found: list[str] = []
        missing: list[str] = []
        for name in dict.fromkeys(str(n) for n in names if n):
            (found if library.find(self.ctx.user_id, name) is not None else missing).append(name)
        if missing:
            notes.append(f"skill{'s' if len(missing) > 1 else ''} {', '.join(missing)} not in "
                         "Iris (not loaded)")
        return found[:5]

    def _model(self, job: dict[str, Any], notes: list[str]) -> str | None:
        if not job.get("model"):
            return None
        from core.migrate.hermes_model import hermes_model

        model, _ = hermes_model({"model": {"default": job.get("model"),
                                           "provider": job.get("provider") or "auto",
                                           "base_url": job.get("base_url")}})
        if model is None or "/" not in model:
            notes.append(f"model {job.get('model')!r} has no Iris name (the default is used)")
            return None
        return model

    def _target(self, job: dict[str, Any], notes: list[str]) -> Target:
        deliver = str(job.get("deliver") or ("origin" if job.get("origin") else "local"))
        deliver = deliver.split(",")[0].strip()
        if deliver in ("local", "none", ""):
            return NO_TARGET
        if deliver == "origin":
            given = job.get("origin")
            origin: dict[str, Any] = given if isinstance(given, dict) else {}
            platform = str(origin.get("platform") or job.get("user_platform") or "")
            chat = origin.get("chat_id") or job.get("user_id")
            thread = origin.get("thread_id")
            if not platform or chat is None:
                notes.append("its origin chat is unknown: results stay in the job's history")
                return NO_TARGET
            deliver = f"{platform}:{chat}" + (f":{thread}" if thread else "")
        platform, _, rest = deliver.partition(":")
        platform = platform.lower()
        if platform not in ("telegram", "slack"):
            notes.append(f"Iris cannot deliver to {platform}: results stay in the job's history")
            return NO_TARGET
        if not rest:  # the platform's home channel: the person's own chat there
            own = sorted(a for a in self.people.own if a.startswith(f"{platform}:"))
            if not own:
                notes.append(f"no {platform} chat known for the home channel: results stay in "
                             "the job's history")
                return NO_TARGET
            rest = own[0].split(":", 1)[1].rsplit("/", 1)[-1]
        from core.platforms.registry import PLATFORMS

        parse_chat = PLATFORMS[platform].parse_chat
        assert parse_chat is not None  # telegram and slack both parse chat addresses
        try:
            chat_address = parse_chat(rest)
        except Exception as exc:  # a malformed Hermes target is reported, not raised
            notes.append(f"delivery target {deliver!r} not understood ({exc})")
            return NO_TARGET
        return Target(platform, chat_address.chat_key, chat_address.address,
                      chat_address.label)
