"""What ``iris doctor`` found: findings by level, each with its fix. A type of its own, so the
checks in other packages (features, platforms, the browser's) fill a report without importing
the checks that call them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from core.config import Settings

Level = Literal["ok", "warning", "error"]


@dataclass(frozen=True)
class Finding:
    level: Level
    check: str
    message: str
    fix: str | None = None


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    settings: Settings | None = None

    def add(self, level: Level, check: str, message: str, fix: str | None = None) -> None:
        self.findings.append(Finding(level, check, message, fix))

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]
