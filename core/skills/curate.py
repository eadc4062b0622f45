"""``iris skills curate``: library skills unused for ``skills_stale_days`` become stale (ranked a
little lower), after ``skills_archive_days`` archived (out of the index, restorable with
``iris skills rollback``). Nothing is deleted. Bundled skills are not curated. Skills that keep
preceding failed turns (``core.learning.skill_outcomes``) are listed for a look
(``failing``), bundled ones included; their status does not change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.skills.library import SkillLibrary
    from core.skills.records import SkillEntry

DAY = 86_400.0


@dataclass(frozen=True)
class Curated:
    user_id: str
    name: str
    before: str
    after: str
    idle_days: float

    def as_dict(self) -> dict[str, object]:
        return {"user_id": self.user_id, "name": self.name, "from": self.before,
                "to": self.after, "idle_days": round(self.idle_days, 1)}


def last_active(entry: SkillEntry) -> float:
    """When the skill was last used or changed."""
    return max(entry.usage.last_used_at or 0.0, entry.updated_at, entry.created_at)


def failing(library: SkillLibrary, user_id: str) -> list[SkillEntry]:
    """The user's skills that keep preceding failures (they are ranked lower meanwhile)."""
    return [e for e in library.entries(user_id) if e.usage.failing]


def curate(
    library: SkillLibrary, user_ids: list[str], *, at: float | None = None, dry_run: bool = False
) -> list[Curated]:
    at = library.store.clock.now() if at is None else at
    stale_after = library.settings.skills_stale_days * DAY
    archive_after = library.settings.skills_archive_days * DAY
    changes: list[Curated] = []
    for user_id in user_ids:
        for entry in library.catalog.list(user_id):
            idle = at - last_active(entry)
            if idle >= archive_after:
                target = "archived"
            elif idle >= stale_after and entry.status == "active":
                target = "stale"
            else:
                continue
            changes.append(Curated(user_id, entry.name, entry.status, target, idle / DAY))
            if not dry_run:
                library.catalog.set_status(user_id, entry.name, target, at=at)
    return changes
