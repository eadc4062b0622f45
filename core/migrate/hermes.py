"""``iris import-hermes``: bring a Hermes Agent home (``~/.hermes``) into one Iris user.

Taken: ``memories/MEMORY.md`` and ``memories/USER.md`` (entry by entry, scanned, provenance
``import``), ``skills/`` (through the skills importer, each skill all-or-nothing) and the
model named in ``config.yaml`` (as the user's model). Everything else is listed as skipped,
with the reason; API keys are never copied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import IrisUsageError
from core.memory.book import Limits, MemoryBook
from core.memory.models import TARGETS
from core.memory.ops import MemoryRefused, check_content
from core.memory.transfer import ImportReport, import_entries, parse_entries, read_memory_file

if TYPE_CHECKING:
    from core.memory.models import Target
    from core.store import Store

FILES = {"memory": "MEMORY.md", "user": "USER.md"}
OPENAI_COMPATIBLE = {"custom", "ollama", "vllm", "llamacpp", "lmstudio", "nous", "nous-api"}
PREFIXES = {"openrouter": "openrouter", "anthropic": "anthropic", "openai": "openai",
            "openai-codex": "openai", "gemini": "gemini", "deepinfra": "deepinfra",
            "huggingface": "huggingface", "nvidia": "nvidia_nim", "ollama-cloud": "ollama"}
SKIPPED = {
    "SOUL.md": "persona file: Iris keeps its own base prompt",
    ".env": "API keys and secrets are never copied; set IRIS_MODEL_API_KEY yourself",
    "auth.json": "OAuth credentials are never copied",
    "cron": "scheduled jobs: recreate them with the cron tool or `iris cron`",
    "sessions": "gateway sessions: import transcripts with `iris sessions import`",
    "state.db": "Hermes' session database: import transcripts with `iris sessions import`",
    "logs": "logs are not imported",
}


@dataclass
class HermesReport:
    home: Path
    memory: list[ImportReport] = field(default_factory=list)
    skills: dict[str, Any] | None = None
    model: str | None = None
    taken: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"Hermes home: {self.home}", "Took:"]
        out += [f"  {line}" for line in self.taken] or ["  nothing"]
        for report in self.memory:
            out += [f"  {line}" for line in report.lines()[1:]]
        out.append("Skipped:")
        out += [f"  {line}" for line in self.skipped] or ["  nothing"]
        out += [f"Note: {note}" for note in self.notes]
        return out


def hermes_model(config: dict[str, Any]) -> tuple[str | None, list[str]]:
    """A litellm model string for Hermes' ``model`` setting, and what the operator must do."""
    section = config.get("model")
    if isinstance(section, str):
        section = {"default": section}
    if not isinstance(section, dict):
        return None, []
    name = section.get("default") or section.get("model")
    if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name.strip()):
        return None, ["config.yaml names no usable model"]
    name = name.strip()
    provider = str(section.get("provider") or "auto").lower()
    base_url = section.get("base_url") if isinstance(section.get("base_url"), str) else None
    notes: list[str] = []
    if provider == "auto" and base_url and "openrouter.ai" in base_url:
        provider = "openrouter"
    if provider in PREFIXES:
        prefix = PREFIXES[provider]
        model = name if name.startswith(f"{prefix}/") else f"{prefix}/{name}"
    elif provider in OPENAI_COMPATIBLE or (provider == "auto" and base_url):
        if not base_url:
            return None, [f"provider {provider!r} without base_url has no Iris equivalent"]
        model = f"openai/{name}"
        notes.append(f"this model is served at {base_url}: set IRIS_MODEL_API_BASE={base_url}")
    elif provider == "auto" and "/" in name:
        model = f"openrouter/{name}"
    else:
        return None, [f"provider {provider!r} has no Iris equivalent; set IRIS_MODEL yourself"]
    notes.append("API keys were not copied: set IRIS_MODEL_API_KEY for this provider")
    return model, notes


def _read_config(home: Path, report: HermesReport) -> dict[str, Any]:
    path = home / "config.yaml"
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        report.skipped.append(f"config.yaml: not readable YAML ({type(exc).__name__})")
        return {}
    if not isinstance(data, dict):
        report.skipped.append("config.yaml: not a mapping")
        return {}
    return data


def _memories(
    store: Store, user_id: str, home: Path, limits: Limits, report: HermesReport, dry_run: bool
) -> None:
    for target in TARGETS:
        path = home / "memories" / FILES[target]
        if not path.is_file():
            report.skipped.append(f"memories/{FILES[target]}: not present")
            continue
        texts = parse_entries(read_memory_file(path))
        if dry_run:
            part = ImportReport(target=target)
            for text in texts:
                try:
                    check_content(text, target, limits.as_dict()[target])
                    part.added.append(text)
                except MemoryRefused as exc:
                    part.refused.append((text, str(exc)))
        else:
            part = import_entries(
                MemoryBook(store), user_id, target, texts, limits=limits, who="import-hermes"
            )
        report.memory.append(part)
        report.taken.append(f"memories/{FILES[target]}: {part.lines()[0]}")


def _skills(
    store: Store, settings: Any, user_id: str, home: Path, report: HermesReport, dry_run: bool
) -> None:
    folder = home / "skills"
    if not folder.is_dir():
        report.skipped.append("skills/: not present")
        return
    from core.skills.format import find_skill_dirs

    found = find_skill_dirs(folder)
    if not found:
        report.skipped.append("skills/: no SKILL.md found")
        return
    if dry_run:
        report.taken.append(f"skills/: {len(found)} skills would be imported")
        return
    from core.skills.importer import import_skills
    from core.skills.library import SkillLibrary

    result = import_skills(SkillLibrary(store, settings), user_id, str(folder))
    report.skills = result.as_dict()
    report.taken.append(
        f"skills/: {len(result.loaded)} loaded, {len(result.warned)} with warnings, "
        f"{len(result.refused)} refused"
    )
    for item in result.refused:
        report.skipped.append(f"skill {item.path}: {'; '.join(item.reasons)}")


def import_hermes(
    store: Store, settings: Any, user_id: str, home: Path, *, dry_run: bool = False,
    set_model: bool = True,
) -> HermesReport:
    home = home.expanduser()
    if not home.is_dir():
        raise IrisUsageError(f"{home}: no such directory (a Hermes home holds config.yaml, "
                             "memories/ and skills/)")
    report = HermesReport(home=home)
    limits = Limits.from_settings(settings)
    _memories(store, user_id, home, limits, report, dry_run)
    _skills(store, settings, user_id, home, report, dry_run)
    config = _read_config(home, report)
    model, notes = hermes_model(config)
    if model and set_model:
        if not dry_run:
            store.users.set_model(user_id, model)
        report.model = model
        report.taken.append(f"config.yaml model: the user's model is now {model}")
        report.notes += notes
    elif model:
        report.skipped.append(f"config.yaml model {model}: --no-model given")
    elif notes:
        report.skipped += [f"config.yaml model: {note}" for note in notes]
    found = config.get("memory")
    memory_cfg: dict[str, Any] = found if isinstance(found, dict) else {}
    limit_keys: tuple[tuple[str, Target], ...] = (
        ("memory_char_limit", "memory"), ("user_char_limit", "user"),
    )
    for key, target in limit_keys:
        theirs = memory_cfg.get(key)
        ours = limits.as_dict()[target]
        if isinstance(theirs, int) and theirs > ours:
            report.notes.append(
                f"Hermes allowed {theirs:,} characters for {target}; Iris allows {ours:,} "
                f"(IRIS_{'MEMORY' if target == 'memory' else 'USER'}_LIMIT_CHARS). Entries "
                "that did not fit are in the archive."
            )
    for name, why in SKIPPED.items():
        if (home / name).exists():
            report.skipped.append(f"{name}: {why}")
    return report
