"""Conversation context in the ranking: who said it.

- Speakers: imported conversations name the people in them (``messages.name``). A query that
  names one ("What did Marcus say about…", "Tessa's team") is about that person's turns: the
  name is taken out of the words (people rarely write their own name) and their turns are lifted.
  When the query's subject is the user ("What did I tell Marcus…"), the name only goes.

The turns next to a match (where a chat's answer often lies) are not lifted in the ranking:
on the real-chat recall benchmark that earned nothing on held-out questions (docs/benchmarks.md,
"Recall on real conversations, second pass"); the ``session_search`` tool shows them beside each
hit instead (``core.search.grouping``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.search.query import FIRST_PERSON

if TYPE_CHECKING:
    from core.store import Store

SPEAKER_WEIGHT = 0.3
_WORD = re.compile(r"[\w']+")


@dataclass(frozen=True)
class Speaker:
    name: str | None  # the named speaker whose turns the query is about (None: the user)
    text: str         # the query without the name


def named_speaker(store: Store, user_id: str, text: str) -> Speaker | None:
    """The speaker the query names, if any of the user's conversations has one by that name."""
    names = store.search.speakers(user_id)
    if not names:
        return None
    lowered = text.lower().replace("\u2019", "'")
    for name in sorted(names, key=len, reverse=True):
        pattern = re.compile(rf"(?<!\w){re.escape(name.lower())}(?:'s)?(?!\w)")
        found = pattern.search(lowered)
        if not found:
            continue
        first = next((m.start() for m in _WORD.finditer(lowered)
                      if m.group() in FIRST_PERSON), None)
        subject = None if first is not None and first < found.start() else name
        rest = " ".join(pattern.sub(" ", lowered).split())
        return Speaker(subject, rest)
    return None


def lift_speaker(scores: dict[int, float], messages: dict[int, Any], name: str
                 ) -> dict[int, float]:
    return {mid: value * (1 + SPEAKER_WEIGHT) if messages[mid].message.name == name else value
            for mid, value in scores.items() if mid in messages}
