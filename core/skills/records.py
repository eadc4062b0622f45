"""What the skill index knows about a skill, its versions and its usage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Provenance = Literal["bundled", "imported", "agent", "user"]
PROVENANCES: tuple[str, ...] = ("bundled", "imported", "agent", "user")
Status = Literal["active", "stale", "archived"]


@dataclass(frozen=True)
class SkillUsage:
    shown: int = 0
    used: int = 0
    patched: int = 0
    last_shown_at: float | None = None
    last_used_at: float | None = None
    last_patched_at: float | None = None


@dataclass(frozen=True)
class SkillEntry:
    """A skill as the index sees it: a bundled skill, or the head of a user's library skill."""

    name: str
    description: str
    tags: tuple[str, ...]
    category: str | None
    origin: str  # provenance of the first version: bundled (a user copy), imported, agent, user
    provenance: str  # provenance of the current version
    version: int  # 0 for a bundled skill
    files: tuple[str, ...]
    search_text: str = ""
    status: str = "active"
    source: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    stale_at: float | None = None
    archived_at: float | None = None
    usage: SkillUsage = field(default_factory=SkillUsage)

    @property
    def bundled(self) -> bool:
        return self.version == 0

    @property
    def kind(self) -> str:
        """How a person would name where it came from."""
        if self.bundled:
            return "bundled"
        if self.origin == "bundled":
            return "your copy of a bundled skill"
        if self.origin == "imported":
            return "imported" if self.provenance == "imported" else "imported, since edited"
        return {"agent": "written by Iris", "user": "yours"}.get(self.origin, self.origin)


@dataclass(frozen=True)
class SkillVersion:
    name: str
    version: int
    provenance: str
    action: str
    note: str | None
    archived: bool
    created_at: float
