"""Memory's data: operations and the result of a write (entries and archived entries are the
store's rows, re-exported here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.store.memory import TARGETS as TARGETS
from core.store.memory import ArchivedEntry as ArchivedEntry
from core.store.memory import MemoryEntry as MemoryEntry
from core.store.memory import Target as Target

Provenance = Literal["user", "agent", "review", "import"]
DELIMITER = "\n§\n"
LABELS = {"memory": "MEMORY", "user": "USER PROFILE"}


class MemoryOperation(BaseModel):
    """One change: add ``content``, replace the entry containing ``old_text`` with ``content``,
    or remove the entry containing ``old_text``."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["add", "replace", "remove"]
    target: Target = Field(
        default="memory",
        description="'memory' for your notes (environment, conventions, lessons); 'user' for "
        "who the user is and their preferences.",
    )
    content: str | None = Field(default=None, description="The entry text (add, replace).")
    old_text: str | None = Field(
        default=None,
        description="A unique substring of the entry to change (replace, remove).",
    )

    @model_validator(mode="after")
    def _needs(self) -> MemoryOperation:
        if self.action in ("add", "replace") and not (self.content and self.content.strip()):
            raise ValueError(f"{self.action} needs a non-empty 'content'")
        if self.action in ("replace", "remove") and not (self.old_text and self.old_text.strip()):
            raise ValueError(f"{self.action} needs 'old_text': a unique part of the entry")
        return self


@dataclass(frozen=True)
class Usage:
    target: Target
    chars: int
    limit: int
    entries: int

    @property
    def percent(self) -> int:
        return round(100 * self.chars / self.limit) if self.limit else 0

    def header(self) -> str:
        return f"{LABELS[self.target]} [{self.percent}% — {self.chars:,}/{self.limit:,} chars]"


@dataclass
class WriteResult:
    notes: list[str] = field(default_factory=list)
    archived: list[ArchivedEntry] = field(default_factory=list)
    usage: dict[Target, Usage] = field(default_factory=dict)
    changed: bool = False
    attempts: int = 1


def total_chars(contents: list[str]) -> int:
    return len(DELIMITER.join(contents))


def clip(text: str, width: int = 60) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= width else one_line[: width - 1] + "…"


def summary(result: WriteResult) -> str:
    """A short reply: what happened and how full the stores are, never the stores' content."""
    fill = ", ".join(
        f"{u.target} {u.percent}% ({u.chars:,}/{u.limit:,})"
        for u in (result.usage[t] for t in TARGETS)
    )
    return f"{' '.join(result.notes)} Now: {fill}."
