"""Near-duplicate skills: a new skill whose name or description says what an existing one says
is refused in favour of patching that one (the "150 skills, half of them twins" failure)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher

from core.skills.ranking import similarity
from core.skills.records import SkillEntry
from core.skills.terms import terms

NAME_RATIO = 0.88
DESCRIPTION_SIMILARITY = 0.62


@dataclass(frozen=True)
class NearDuplicate:
    entry: SkillEntry
    reason: str


def name_match(a: str, b: str) -> bool:
    """Same words in another order or form (``deploy-modal`` / ``modal-deployment``), or
    nearly the same spelling."""
    words_a, words_b = set(terms(a.replace("-", " "))), set(terms(b.replace("-", " ")))
    if words_a and words_a == words_b:
        return True
    return SequenceMatcher(None, a, b).ratio() >= NAME_RATIO


def near_duplicate(
    name: str, description: str, existing: Iterable[SkillEntry]
) -> NearDuplicate | None:
    """The existing skill most like the proposed one, when it is too alike."""
    best: NearDuplicate | None = None
    best_score = 0.0
    for entry in existing:
        if entry.name == name or entry.status == "archived":
            continue
        if name_match(name, entry.name):
            return NearDuplicate(entry, f"its name is nearly the same as {entry.name!r}")
        score = similarity(description, entry.description)
        if score >= DESCRIPTION_SIMILARITY and score > best_score:
            best_score = score
            best = NearDuplicate(
                entry, f"its description says nearly what {entry.name!r} says "
                f"({score:.0%} alike)",
            )
    return best
