"""What the skill index knows about a skill, its versions and its usage (the records are the
store's, ``core.store.skills``)."""

from __future__ import annotations

from typing import Literal

from core.store.skills import SkillEntry as SkillEntry
from core.store.skills import SkillUsage as SkillUsage
from core.store.skills import SkillVersion as SkillVersion

Provenance = Literal["bundled", "imported", "agent", "user"]
PROVENANCES: tuple[str, ...] = ("bundled", "imported", "agent", "user")
Status = Literal["active", "stale", "archived"]
