"""One version of a skill as read: its index entry and its files, read on demand. A type of its
own, so the modules that act on a version (team offers, the importer, skill_manage) need not
import the library that makes it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from core.errors import NotFound
from core.skills.records import SkillEntry

SKILL_MD = "SKILL.md"


@dataclass
class SkillSnapshot:
    """One version of a skill: its index entry and its files (read on demand)."""

    entry: SkillEntry
    shas: dict[str, str]
    sizes: dict[str, int]
    reader: Callable[[str], bytes]
    _cache: dict[str, bytes] = field(default_factory=dict)

    @property
    def paths(self) -> list[str]:
        return sorted(self.shas)

    def data(self, path: str) -> bytes:
        if path not in self.shas:
            raise NotFound(f"skill {self.entry.name!r} has no file {path!r}")
        if path not in self._cache:
            self._cache[path] = self.reader(path)
        return self._cache[path]

    def text(self, path: str = SKILL_MD) -> str:
        return self.data(path).decode("utf-8")

    def all_files(self) -> dict[str, bytes]:
        return {path: self.data(path) for path in self.paths}
