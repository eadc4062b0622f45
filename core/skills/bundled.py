"""Bundled skills: the read-only SKILL.md directories shipped in the repository's ``skills/``.

The directory is the ``skills_dir`` setting (the Modal image points it at its copy); by default
it is ``skills/`` next to the ``core`` package. Parsed once per process and re-read when a
SKILL.md changes.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.skills.records import SkillEntry

if TYPE_CHECKING:
    from core.config import Settings
    from core.skills.format import ParsedSkill

log = logging.getLogger("iris.skills")

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "skills"


@dataclass(frozen=True)
class BundledSkill:
    path: Path
    parsed: ParsedSkill
    files: tuple[str, ...]
    entry: SkillEntry

    def read(self) -> dict[str, bytes]:
        files = {"SKILL.md": (self.path / "SKILL.md").read_bytes()}
        for rel in self.files:
            files[rel] = (self.path / rel).read_bytes()
        return files


_cache: dict[Path, tuple[tuple[tuple[str, int], ...], dict[str, BundledSkill]]] = {}
_lock = threading.Lock()


def bundled_dir(settings: Settings) -> Path:
    return Path(settings.skills_dir) if settings.skills_dir else DEFAULT_DIR


def _signature(root: Path) -> tuple[tuple[str, int], ...]:
    from core.skills.format import find_skill_dirs

    marks = []
    for skill_dir in find_skill_dirs(root):
        for current, dirs, files in os.walk(skill_dir):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                with_path = Path(current, name)
                try:
                    marks.append((str(with_path), with_path.stat().st_mtime_ns))
                except OSError:
                    continue
    return tuple(sorted(marks))


def load_bundled(settings: Settings) -> dict[str, BundledSkill]:
    """Every loadable bundled skill by name. Unloadable ones are logged and left out."""
    root = bundled_dir(settings)
    if not root.is_dir():
        return {}
    signature = _signature(root)
    with _lock:
        cached = _cache.get(root)
        if cached and cached[0] == signature:
            return cached[1]
    skills = _load(root)
    with _lock:
        _cache[root] = (signature, skills)
    return skills


def _load(root: Path) -> dict[str, BundledSkill]:
    from core.skills.format import SkillParseError, find_skill_dirs, load_skill_dir

    skills: dict[str, BundledSkill] = {}
    for skill_dir in find_skill_dirs(root):
        try:
            parsed, files = load_skill_dir(skill_dir)
        except SkillParseError as error:
            log.warning("bundled skill skipped: %s", error)
            continue
        if parsed.name in skills:
            log.warning("bundled skill %s: a second copy at %s was skipped", parsed.name,
                        skill_dir)
            continue
        entry = SkillEntry(
            name=parsed.name, description=parsed.description, tags=tuple(parsed.tags),
            category=parsed.category, origin="bundled", provenance="bundled", version=0,
            files=tuple(files), search_text=parsed.body,
        )
        skills[parsed.name] = BundledSkill(skill_dir, parsed, tuple(files), entry)
    return skills
