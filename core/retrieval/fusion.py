"""Fusing a lexical ranking with dense (embedding) similarities.

Both signals go on a 0–1 scale, then mix convexly, which keeps the size of each signal (unlike
reciprocal-rank fusion, where a distant neighbour still counts):

- lexical: a score over the best score for the query;
- dense: a cosine above a floor (below it the model's sentence vectors say nothing), over the
  spread between the best cosine and the floor, but over at least a minimum spread, so a query
  whose best neighbour is only faintly related hands little weight to it.

The floors, spreads and weights are each feature's own.
"""

from __future__ import annotations


def by_top(score: float, top: float) -> float:
    """A lexical score on a 0–1 scale (``top``: the best score for the query, > 0)."""
    return score / top


def above_floor(cosine: float, *, top: float, floor: float, min_spread: float) -> float:
    """A cosine on a 0–1 scale: 0 at ``floor``, 1 at ``top`` (when ``top - floor`` is at least
    ``min_spread``). Negative below the floor: callers drop or clip those."""
    return (cosine - floor) / max(top - floor, min_spread)


def mix(lexical: float, dense: float, weight: float) -> float:
    """``(1 - weight)·lexical + weight·dense``."""
    return (1 - weight) * lexical + weight * dense
