"""Hermes' skills with their history.

Every skill under ``skills/`` (hidden folders such as ``.archive`` and ``.hub`` aside) goes
through Iris' skills importer (each all-or-nothing, scanned; an identical skill already there is
left unchanged, so a second run writes nothing). A Hermes skill that Iris already bundles (the
same name, or a known equivalent) is matched to Iris' copy instead of duplicated. Usage counts
and dates from ``skills/.usage.json`` (uses, views, patches) are carried over to the skill —
imported or matched — so the curator and routing see them; counters are raised to Hermes'
values, never added twice."""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from core.migrate.context import ImportContext

# Hermes skills that Iris bundles under another name (same purpose, Iris' own text).
EQUIVALENT = {
    "hermes-agent-skill-authoring": "skill-authoring",
}


def _epoch(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.timestamp() if parsed.tzinfo else None


def _usage_file(folder: Path) -> dict[str, dict[str, Any]]:
    path = folder / ".usage.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)} if isinstance(
        data, dict) else {}


def import_skills_with_usage(ctx: ImportContext) -> None:
    report = ctx.report
    folder = ctx.home / "skills"
    if not folder.is_dir():
        report.skipped("skills", "skills/: not present")
        return
    from core.skills.format import find_skill_dirs, parse_skill
    from core.skills.library import SkillLibrary

    library = SkillLibrary(ctx.store, ctx.settings)
    bundled = set(library.bundled())
    found = find_skill_dirs(folder)
    stage_dirs: list[Path] = []
    matched: dict[str, str] = {}
    for skill_dir in found:
        name = _skill_name(skill_dir, parse_skill)
        ours = name if name in bundled else EQUIVALENT.get(name or "")
        if name and ours in bundled:
            matched[name] = ours
            report.taken("skills", f"{name}: matched to Iris' bundled skill {ours} (not "
                         "duplicated)")
        else:
            stage_dirs.append(skill_dir)
    report.count("skills", "skills found", len(found))
    if ctx.dry_run:
        report.taken("skills", f"{len(stage_dirs)} skills would be imported")
    elif stage_dirs:
        _import(ctx, library, folder, stage_dirs)
    _usage(ctx, folder, matched)


def _skill_name(skill_dir: Path, parse: Any) -> str | None:
    try:
        return cast("str | None", parse((skill_dir / "SKILL.md").read_text(encoding="utf-8")).name)
    except Exception:  # the importer reports the reason for an unreadable skill
        return skill_dir.name


def _import(ctx: ImportContext, library: Any, folder: Path, dirs: list[Path]) -> None:
    from core.skills.importer import import_skills

    report = ctx.report
    with tempfile.TemporaryDirectory(prefix="hermes-skills-") as tmp:
        for skill_dir in dirs:
            rel = skill_dir.relative_to(folder)
            shutil.copytree(skill_dir, Path(tmp) / rel, symlinks=True)
        result = import_skills(library, ctx.user_id, tmp)
    for item in result.items:
        if item.status == "loaded":
            report.count("skills", "skills loaded")
            if item.warnings:
                report.taken("skills", f"{item.name}: {'; '.join(item.warnings)}")
        elif item.status == "unchanged":
            report.count("skills", "skills already there, unchanged")
        elif item.status == "quarantined":
            from core.skills.findings import summary

            report.count("skills", "skills quarantined for review")
            report.taken("skills", f"{item.name}: quarantined, {summary(item.findings)}; "
                         f"iris skills review {item.name}, then approve or reject it")
        else:
            report.refused("skills", f"{item.path}: {'; '.join(item.reasons)}")


def _usage(ctx: ImportContext, folder: Path, matched: dict[str, str]) -> None:
    usage = _usage_file(folder)
    if not usage:
        return
    from core.skills.library import SkillLibrary

    library = SkillLibrary(ctx.store, ctx.settings)
    for name, record in sorted(usage.items()):
        target = matched.get(name, name)
        if library.find(ctx.user_id, target) is None and not ctx.dry_run:
            ctx.report.skipped("skills", f"usage of {name}: no such skill in Iris")
            continue
        counts = {k: max(0, int(record.get(k) or 0)) for k in
                  ("use_count", "view_count", "patch_count")}
        if not any(counts.values()):
            continue
        ctx.report.count("skills", "usage records carried over")
        if ctx.dry_run:
            continue
        ctx.store.imports.seed_skill_usage(
            ctx.user_id, target, used=counts["use_count"], shown=counts["view_count"],
            patched=counts["patch_count"], last_used_at=_epoch(record.get("last_used_at")),
            last_shown_at=_epoch(record.get("last_viewed_at")),
            last_patched_at=_epoch(record.get("last_patched_at")),
        )
