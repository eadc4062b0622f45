"""Fusing the words ranking (BM25F) with dense similarity to each skill.

Both signals go on a 0–1 scale, then mix convexly:

- lexical: a skill's BM25F score over the best score for the query;
- dense: cosine above ``ABSOLUTE_FLOOR`` (below it, this model's sentence vectors say nothing),
  over the spread between the best cosine and the floor, but over at least ``MIN_SPREAD``, so
  a message only faintly related to every skill ("hi") hands little weight to its nearest one.

The weight was chosen on the dev split of ``bench/skills_routing.py`` only (``--tune`` shows the
search); a skill the words do not match at all can still win on meaning alone, which is the
point: "my photos are too big to email" finds an image-resizing skill.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.retrieval.fusion import above_floor, by_top, mix

SEMANTIC_WEIGHT = 0.6
ABSOLUTE_FLOOR = 0.15
MIN_SPREAD = 0.2


def lexical_scale(scores: Sequence[float]) -> list[float]:
    top = max(scores, default=0.0)
    return [by_top(s, top) for s in scores] if top > 0 else [0.0] * len(scores)


def dense_scale(cosines: Sequence[float | None], *, floor: float = ABSOLUTE_FLOOR,
                min_spread: float = MIN_SPREAD) -> list[float]:
    """Cosines on a 0–1 scale; a skill without a vector (None) scores 0."""
    known = [c for c in cosines if c is not None]
    top = max(known, default=floor)
    if top <= floor:
        return [0.0] * len(cosines)
    return [max(0.0, above_floor(c, top=top, floor=floor, min_spread=min_spread))
            if c is not None else 0.0 for c in cosines]


def fuse(lexical: Sequence[float], cosines: Sequence[float | None], *,
         weight: float = SEMANTIC_WEIGHT, floor: float = ABSOLUTE_FLOOR,
         min_spread: float = MIN_SPREAD) -> list[float]:
    """One score per skill in 0..1: ``(1 - weight)·lexical + weight·dense``."""
    if len(lexical) != len(cosines):
        raise ValueError("one cosine per lexical score")
    if not 0.0 <= weight <= 1.0:
        raise ValueError("the semantic weight is between 0 and 1")
    dense = dense_scale(cosines, floor=floor, min_spread=min_spread)
    return [mix(lex, d, weight) for lex, d in zip(lexical_scale(lexical), dense, strict=True)]
