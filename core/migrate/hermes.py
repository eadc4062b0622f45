"""``iris import-hermes``: bring a whole Hermes Agent home (``~/.hermes``) into Iris.

Taken, each step reporting what it took, skipped and refused (``core.migrate.report``):
``memories/MEMORY.md`` and ``USER.md`` (entry by entry, scanned), ``SOUL.md`` (the user's persona),
``skills/`` with their usage counts (``core.migrate.hermes_skills``), the model from
``config.yaml``, ``state.db`` — every session and message with its platform identities mapped to
Iris accounts and group scopes (``hermes_sessions``, ``hermes_people``), indexed for search —
and ``cron/jobs.json`` (``hermes_cron``). ``profiles/<name>/`` homes are separate agents: one
with ``profile=``, or each into its own user. Secrets (``.env``, ``auth.json``, keys inside
``config.yaml``) are never read into Iris; they are listed as refused. Every id is derived from
Hermes' own, so a second run takes only what is new and an interrupted run can be rerun.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import IrisUsageError
from core.memory.book import Limits, MemoryBook
from core.memory.models import TARGETS
from core.memory.ops import MemoryRefused, check_content
from core.memory.transfer import import_entries, parse_entries, read_memory_file
from core.migrate.context import ImportContext, Progress
from core.migrate.hermes_model import hermes_model
from core.migrate.report import MigrationReport

if TYPE_CHECKING:
    from core.store import Store

FILES = {"memory": "MEMORY.md", "user": "USER.md"}
SECRET_FILES = {
    ".env": "API keys and tokens are never copied; set Iris' own (IRIS_MODEL_API_KEY, "
            "IRIS_TELEGRAM_TOKEN, …) in Iris' .env",
    "auth.json": "OAuth credentials are never copied; sign in again where Iris needs it",
}
SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|auth|credential)", re.I)
NOT_MOVED = {
    "logs": "logs are not imported",
    "sessions": "gateway session files: the history comes from state.db",
    "checkpoints": "file checkpoints belong to Hermes' working copies",
    "sandboxes": "Hermes' sandboxes are not Iris workspaces",
    "hooks": "gateway hooks run Hermes code; Iris has no equivalent",
    "plugins": "Hermes plugins run Hermes code; Iris has no equivalent",
}
EMBED_MODES = ("full", "fast", "none")


def read_config(home: Path, report: MigrationReport) -> dict[str, Any]:
    path = home / "config.yaml"
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        report.refused("other", f"config.yaml: not readable YAML ({type(exc).__name__})")
        return {}
    if not isinstance(data, dict):
        report.refused("other", "config.yaml: not a mapping")
        return {}
    return data


def secret_keys(config: Any, path: str = "") -> list[str]:
    """Where config.yaml holds something secret-looking (the values are never read out)."""
    found: list[str] = []
    if isinstance(config, dict):
        for key, value in config.items():
            where = f"{path}.{key}" if path else str(key)
            if SECRET_KEY.search(str(key)) and isinstance(value, str) and value.strip():
                found.append(where)
            else:
                found += secret_keys(value, where)
    elif isinstance(config, list):
        for i, value in enumerate(config):
            found += secret_keys(value, f"{path}[{i}]")
    return found


def _memories(ctx: ImportContext, limits: Limits) -> None:
    report = ctx.report
    for target in TARGETS:
        path = ctx.home / "memories" / FILES[target]
        if not path.is_file():
            report.skipped("memory", f"memories/{FILES[target]}: not present")
            continue
        texts = parse_entries(read_memory_file(path))
        added = duplicates = 0
        refused: list[tuple[str, str]] = []
        if ctx.dry_run:
            for text in texts:
                try:
                    check_content(text, target, limits.as_dict()[target])
                    added += 1
                except MemoryRefused as exc:
                    refused.append((text, str(exc)))
        else:  # entries already there are left alone (not even marked as used again)
            have = {e.content for e in ctx.store.memory.entries(ctx.user_id, target)}
            fresh = [t for t in texts if t.strip() not in have]
            part = import_entries(MemoryBook(ctx.store), ctx.user_id, target, fresh,
                                  limits=limits, who="import-hermes") if fresh else None
            added = len(part.added) if part else 0
            duplicates = len(texts) - len(fresh) + (len(part.duplicates) if part else 0)
            refused = part.refused if part else []
        report.taken("memory", f"memories/{FILES[target]}: {added} added, {duplicates} already "
                     "there")
        for text, why in refused:
            report.refused("memory", f"{FILES[target]} entry {text[:60]!r}: {why}")


def _persona(ctx: ImportContext) -> None:
    from core.memory.persona import PersonaRefused, check_persona

    report, path = ctx.report, ctx.home / "SOUL.md"
    if not path.is_file():
        report.skipped("persona", "SOUL.md: not present")
        return
    try:
        text = check_persona(path.read_text(encoding="utf-8", errors="replace"))
    except PersonaRefused as exc:
        report.refused("persona", f"SOUL.md: {exc}; shorten it and use `iris persona edit`")
        return
    current = ctx.store.personas.get(ctx.user_id)
    if current is not None and current.content == text:
        report.skipped("persona", "SOUL.md: already this user's persona")
        return
    if current is not None:
        report.skipped("persona", f"SOUL.md: the user already has a persona (from "
                       f"{current.source}); not overwritten — `iris persona edit` to change it")
        return
    if not ctx.dry_run:
        ctx.store.personas.put(ctx.user_id, text, source="import-hermes", by="import-hermes")
    report.taken("persona", f"SOUL.md: the user's persona ({len(text):,} characters)")


def _model(ctx: ImportContext, config: dict[str, Any], set_model: bool) -> None:
    report = ctx.report
    model, notes = hermes_model(config)
    if model is None:
        for note in notes:
            report.skipped("model", f"config.yaml model: {note}")
        return
    if not set_model:
        report.skipped("model", f"config.yaml model {model}: --no-model given")
        return
    current = ctx.store.users.get(ctx.user_id).model if not ctx.dry_run else None
    if current == model:
        report.skipped("model", f"config.yaml model {model}: already the user's model")
        return
    if current is not None:
        report.skipped("model", f"config.yaml model {model}: the user already uses {current}")
        return
    if not ctx.dry_run:
        ctx.store.users.set_model(ctx.user_id, model)
    report.taken("model", f"config.yaml: the user's model is {model}")
    report.notes.extend(notes)


def _secrets_and_rest(ctx: ImportContext, config: dict[str, Any]) -> None:
    report, home = ctx.report, ctx.home
    for name, why in SECRET_FILES.items():
        if (home / name).exists():
            report.refused("secrets", f"{name}: {why}")
    keys = secret_keys(config)
    if keys:
        report.refused("secrets", f"config.yaml: {len(keys)} secret-looking value"
                       f"{'s' if len(keys) > 1 else ''} ({', '.join(keys[:6])}) never copied")
    for name, why in NOT_MOVED.items():
        if (home / name).exists():
            report.skipped("other", f"{name}/: {why}")
    found = config.get("memory")
    memory_cfg: dict[str, Any] = found if isinstance(found, dict) else {}
    allowed = Limits.from_settings(ctx.settings).as_dict()
    limits: dict[str, int] = {str(k): v for k, v in allowed.items()}
    for key, target in (("memory_char_limit", "memory"), ("user_char_limit", "user")):
        theirs = memory_cfg.get(key)
        if isinstance(theirs, int) and theirs > limits[target]:
            report.notes.append(
                f"Hermes allowed {theirs:,} characters for {target}; Iris allows "
                f"{limits[target]:,}. Entries that did not fit are in the archive.")


def _history(ctx: ImportContext, config: dict[str, Any], embed: str) -> None:
    from core.migrate.hermes_cron import JobImporter
    from core.migrate.hermes_people import People
    from core.migrate.hermes_sessions import SessionImporter
    from core.migrate.hermes_state import StateDB

    report = ctx.report
    path = ctx.home / "state.db"
    people = People(ctx, [])
    if path.is_file():
        db = StateDB(path)
        try:
            report.taken("sessions", f"state.db: schema version {db.version}, read-only")
            importer = SessionImporter(ctx, db)
            touched = importer.run()
            people = importer.people
        finally:
            db.close()
        if not ctx.dry_run:
            _embed(ctx, touched, embed)
    else:
        report.skipped("sessions", "state.db: not present")
        people.approved_users()
    zone = _zone(ctx, config)
    JobImporter(ctx, people, zone).run()


def _zone(ctx: ImportContext, config: dict[str, Any]) -> str:
    from core.scheduler.schedule import ScheduleError, validate_timezone

    wanted = config.get("timezone")
    if isinstance(wanted, str) and wanted.strip():
        try:
            return validate_timezone(wanted)
        except ScheduleError:
            ctx.report.notes.append(f"config.yaml timezone {wanted!r} is unknown; jobs use "
                                    f"{ctx.settings.timezone}")
    return str(ctx.settings.timezone)


def _embed(ctx: ImportContext, users: set[str], mode: str) -> None:
    report = ctx.report
    if mode == "none" or not users:
        if users:
            report.skipped("sessions", "meaning vectors: --embed none (words search works; "
                           "`iris sessions reindex` adds vectors)")
        return
    from core.search import embed

    if not embed.available():
        report.skipped("sessions", "meaning vectors: the embedding model is not installed "
                       "(search is by words)")
        return
    total = sum(ctx.store.vectors.count_missing(u, None if mode == "fast" else embed.FULL)
                for u in sorted(users))
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        ctx.tick("vectors", min(done, total), total)

    embedded = 0
    for user in sorted(users):
        embedded += embed.reindex(ctx.store, user, fast=mode == "fast", progress=step).embedded
    report.count("sessions", f"messages given {'static' if mode == 'fast' else 'full'} "
                 "meaning vectors", embedded)


def import_home(
    store: Store, settings: Any, user_id: str, home: Path, *, dry_run: bool = False,
    set_model: bool = True, embed: str = "fast", slack_team: str | None = None,
    profile: str | None = None, progress: Progress | None = None,
) -> MigrationReport:
    """Import one Hermes home (the default one, or a profile's) into ``user_id``."""
    if embed not in EMBED_MODES:
        raise IrisUsageError(f"--embed is one of {', '.join(EMBED_MODES)}")
    home = home.expanduser()
    if not home.is_dir():
        raise IrisUsageError(f"{home}: no such directory (a Hermes home holds config.yaml, "
                             "memories/, skills/ and state.db)")
    report = MigrationReport(home=str(home), user_id=user_id, dry_run=dry_run, profile=profile)
    ctx = ImportContext(store=store, settings=settings, user_id=user_id, home=home,
                        source=f"hermes:{profile or 'default'}", report=report,
                        dry_run=dry_run, slack_team=slack_team, progress=progress)
    config = read_config(home, report)
    _memories(ctx, Limits.from_settings(settings))
    _persona(ctx)
    _model(ctx, config, set_model)
    from core.migrate.hermes_skills import import_skills_with_usage

    import_skills_with_usage(ctx)
    _history(ctx, config, embed)
    _secrets_and_rest(ctx, config)
    return report


def profile_names(home: Path) -> list[str]:
    folder = home.expanduser() / "profiles"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def profile_user(store: Store, name: str, *, dry_run: bool) -> str:
    """The Iris user a profile becomes with --all-profiles: ``http:hermes-<name>``."""
    account = f"http:hermes-{name}"
    if dry_run:
        try:
            return store.users.resolve(account)
        except Exception:
            return f"(new user {account})"
    return store.users.for_account(account, display_name=f"Hermes profile {name}")


def import_hermes(
    store: Store, settings: Any, user_id: str, home: Path, *, dry_run: bool = False,
    set_model: bool = True, embed: str = "fast", slack_team: str | None = None,
    profile: str | None = None, all_profiles: bool = False, progress: Progress | None = None,
) -> MigrationReport:
    """Import the home (or one of its profiles) into ``user_id``; with ``all_profiles`` each
    profile also goes into its own user (see ``profile_user``)."""
    home = home.expanduser()
    run = functools.partial(import_home, store, settings, dry_run=dry_run, set_model=set_model,
                            embed=embed, slack_team=slack_team, progress=progress)
    if profile is not None:
        if profile not in profile_names(home):
            have = ", ".join(profile_names(home)) or "none"
            raise IrisUsageError(f"{home}/profiles/{profile}: no such profile (profiles: {have})")
        return run(user_id, home / "profiles" / profile, profile=profile)
    report = run(user_id, home)
    names = profile_names(home)
    if all_profiles:
        for name in names:
            owner = profile_user(store, name, dry_run=dry_run)
            report.profiles.append(run(owner, home / "profiles" / name, profile=name))
    elif names:
        report.notes.append(f"profiles not imported: {', '.join(names)} (each is a separate "
                            "agent: --profile NAME into a user, or --all-profiles)")
    return report
