"""Fusing the lexical ranking with semantic neighbours.

Both signals are put on a 0–1 scale before they are mixed (a convex combination, which keeps
the size of each signal, unlike reciprocal-rank fusion where the 50th semantic neighbour still
counts; the arithmetic is ``core.retrieval.fusion``, shared with skill routing):

- lexical: the message's score over the best lexical score of the query;
- semantic: cosine above a floor (the K-th neighbour's, and never below an absolute level under
  which sentence vectors of this model say nothing), over the spread between the best cosine and
  that floor, but over at least ``MIN_SPREAD``, so a query whose best neighbour is only faintly
  related does not hand full weight to it.

Messages the words did not find join the results only when their cosine clears a bar that
depends on the query's length: a sentence's vector is a reliable signal, a single word's is not
(unrelated short texts reach cosines of 0.3–0.4 with this model).

Queries that name identifiers (``ERR_CONN_RESET``, ``0x1F4``, ``v2.3.1``, camelCase, quoted
phrases) lean on the lexical signal and admit no semantic-only messages: there, an exact match
is what the user wants.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from core.retrieval.fusion import above_floor, by_top, mix
from core.search.query import MAX_QUERY_CHARS, PERSON_WEIGHT, ParsedQuery
from core.store.search import Filters

if TYPE_CHECKING:
    from core.store import Store

SEMANTIC_WEIGHT = 0.5
IDENTIFIER_SEMANTIC_WEIGHT = 0.25
NEIGHBOURS = 100
ABSOLUTE_FLOOR = 0.15
MIN_SPREAD = 0.35
ADMIT = ((1, 0.45), (3, 0.30))  # (most words in the query, least cosine); longer: ADMIT_LONG
ADMIT_LONG = 0.20
_WORD = re.compile(r"\w+")

_IDENTIFIER = re.compile(
    r"\b0x[0-9a-fA-F]+\b"                       # hex codes
    r"|\b\w*[A-Za-z]\w*_\w+|\b\w+_\w*[A-Za-z]\w*"  # snake_case, CONSTANT_NAMES
    r"|\b[a-z]+[A-Z][A-Za-z0-9]*"                # camelCase
    r"|\b\w+\.\w+\.\w+"                         # versions, dotted names
    r"|\b\w[\w-]*\w\.[A-Za-z]{1,5}\b"              # file names
    r"|\b[A-Za-z]+-\d+\b"                        # codes such as zebra-4471, PROJ-123
    r"|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{4,}\b"  # letters and digits mixed
    r'|"[^"]+"'                                    # a quoted phrase
)
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th|s|am|pm|k|km|kg|m|h)$", re.IGNORECASE)


def names_identifier(text: str) -> bool:
    """Whether the query names something to match exactly (an ordinal, a decade or a quantity
    such as 3rd, 1950s or 10km is not an identifier)."""
    return any(not _ORDINAL.match(m.group()) for m in _IDENTIFIER.finditer(text))


def admission(text: str) -> float | None:
    """The least cosine for a message only the semantic signal found (None: not admitted)."""
    if names_identifier(text):
        return None
    words = len(_WORD.findall(text))
    return next((bar for most, bar in ADMIT if words <= most), ADMIT_LONG)


def semantic_scale(cosines: dict[int, float], k: int = NEIGHBOURS) -> dict[int, float]:
    """The ``k`` nearest messages' cosines on a 0–1 scale (others are dropped)."""
    if not cosines:
        return {}
    ranked = sorted(cosines.items(), key=lambda item: -item[1])
    top = ranked[0][1]
    kth = ranked[k][1] if len(ranked) > k else -1.0
    floor = max(ABSOLUTE_FLOOR, kth)
    if top <= floor:
        return {}
    return {mid: above_floor(cos, top=top, floor=floor, min_spread=MIN_SPREAD)
            for mid, cos in ranked[:k] if cos > floor}


def fuse(lexical: dict[int, float], semantic: dict[int, float], weight: float
         ) -> dict[int, float]:
    top = max(lexical.values(), default=0.0)
    lex = {mid: by_top(value, top) for mid, value in lexical.items()} if top > 0 else {}
    return {mid: mix(lex.get(mid, 0.0), semantic.get(mid, 0.0), weight)
            for mid in {*lex, *semantic}}


def add_semantic(
    store: Store, user_id: str, text: str, query: ParsedQuery, filters: Filters,
    scores: dict[int, float], messages: dict[int, Any],
) -> tuple[dict[int, float], dict[int, Any], dict[int, tuple[str, ...]]]:
    """Lexical ``scores`` fused with the query's semantic neighbours among the user's messages
    (a bounded backfill first embeds the newest messages that have no vectors yet). Returns the
    fused scores, the messages (neighbours added) and which signals matched each message."""
    from core.search import embed

    text = text[:MAX_QUERY_CHARS]
    embed.lazy_backfill(store, user_id, filters)
    found = embed.neighbours(store, user_id, text, filters)
    close = found.best(semantic_scale)
    bar = admission(text)
    cosines = found.best(lambda scores: scores)
    close = {mid: value for mid, value in close.items()
             if mid in scores or (bar is not None and cosines[mid] >= bar)}
    extra = [mid for mid in close if mid not in messages]
    if extra:
        messages = {**messages, **store.search.messages(user_id, extra)}
    preferred = {"first": "user", "second": "assistant"}.get(query.person or "")
    if preferred:
        close = {mid: value * (1 + PERSON_WEIGHT) if mid in messages
                 and messages[mid].message.role == preferred else value
                 for mid, value in close.items()}
    weight = IDENTIFIER_SEMANTIC_WEIGHT if names_identifier(text) else SEMANTIC_WEIGHT
    fused = fuse(scores, close, weight)
    signals = {
        mid: tuple(name for name, hit in (("lexical", mid in scores), ("semantic", mid in close))
                   if hit)
        for mid in fused
    }
    return {m: v for m, v in fused.items() if m in messages}, messages, signals
