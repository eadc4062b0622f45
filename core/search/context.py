"""Conversation context in the ranking: who said it, and what was said around it.

- Speakers: imported conversations name the people in them (``messages.name``). A query that
  names one ("What did Marcus say about…", "Tessa's team") is about that person's turns: the
  name is taken out of the words (people rarely write their own name) and their turns are lifted.
  When the query's subject is the user ("What did I tell Marcus…"), the name only goes.
- Neighbours: in a conversation the answer often lies in the turn after the one that shares the
  query's words ("What's your major?" / "Applied math"), or before it. The best messages pass part
  of their score to the turns next to them in their session, which join the candidates; a turn
  keeps the larger of its own score and what it is passed, so context never outranks the
  match it came from.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.search.query import FIRST_PERSON
from core.store.search import Filters

if TYPE_CHECKING:
    from core.store import Store

SPEAKER_WEIGHT = 0.3
NEXT_WEIGHT = 0.5       # a turn after a strong match gets this share of its score
PREVIOUS_WEIGHT = 0.3   # a turn before it
NEIGHBOUR_SOURCES = 30  # how many of the best messages pass score to their neighbours
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


def _within(stored: Any, filters: Filters) -> bool:
    return (
        (filters.role is None or stored.message.role == filters.role)
        and (filters.since is None or stored.created_at >= filters.since)
        and (filters.until is None or stored.created_at < filters.until)
    )


def add_neighbours(
    store: Store, user_id: str, scores: dict[int, float], messages: dict[int, Any],
    filters: Filters, *, sources: int = NEIGHBOUR_SOURCES,
) -> tuple[dict[int, float], dict[int, Any]]:
    """Scores with each of the best ``sources`` messages' neighbours lifted by a share of its
    score (neighbours that were not candidates join them when they pass ``filters``)."""
    best = sorted(scores.items(), key=lambda item: -item[1])[:sources]
    if not best:
        return scores, messages
    adjacency = store.search.adjacent(user_id, [mid for mid, _ in best])
    lift: dict[int, float] = defaultdict(float)
    for mid, value in best:
        before, after = adjacency.get(mid, (None, None))
        if after is not None:
            lift[after] = max(lift[after], NEXT_WEIGHT * value)
        if before is not None:
            lift[before] = max(lift[before], PREVIOUS_WEIGHT * value)
    missing = [mid for mid in lift if mid not in messages]
    if missing:
        found = store.search.messages(user_id, missing)
        messages = {**messages, **{m: st for m, st in found.items() if _within(st, filters)}}
    out = dict(scores)
    for mid, value in lift.items():
        if mid in messages:
            out[mid] = max(out.get(mid, 0.0), value)
    return out, messages
