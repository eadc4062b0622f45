"""What every step of a Hermes import shares: the store, the user, the home and its report."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.migrate.report import MigrationReport
    from core.store import Store

# progress(what, done, total): called as a long step advances (sessions, messages, vectors)
Progress = Callable[[str, int, int], None]


@dataclass
class ImportContext:
    store: Store
    settings: Any
    user_id: str
    home: Path
    source: str  # "hermes:<profile>", the namespace of the Hermes ids remembered
    report: MigrationReport
    dry_run: bool = False
    slack_team: str | None = None
    progress: Progress | None = None

    def stable_id(self, prefix: str, *parts: str) -> str:
        """An Iris id derived from Hermes' own ids: the same on every run, distinct per user."""
        digest = hashlib.sha256("\x1f".join((self.user_id, self.source, *parts)).encode())
        return f"{prefix}_{digest.hexdigest()[:20]}"

    def tick(self, what: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(what, done, total)
