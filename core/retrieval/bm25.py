"""BM25 (Robertson–Spärck Jones idf, saturating term frequency, length normalisation) and
the BM25F variant that sums field-weighted frequencies before saturating them."""

from __future__ import annotations

import math


def idf(total: int, df: int) -> float:
    """Inverse document frequency of a term found in ``df`` of ``total`` documents (never
    negative)."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def length_norm(b: float, relative_length: float) -> float:
    """How much a document's length, relative to the average, damps its term frequencies
    (``b`` = 0: not at all; 1: in proportion)."""
    return 1 - b + b * relative_length


def term_score(tf: float, *, idf: float, k1: float, norm: float) -> float:
    """BM25's score for a term seen ``tf`` times in a document with length factor ``norm``."""
    return idf * tf * (k1 + 1) / (tf + k1 * norm)


def saturate(weighted_tf: float, *, idf: float, k1: float) -> float:
    """BM25F's score for a term: its field-weighted, length-normalised frequency saturated."""
    return idf * weighted_tf / (k1 + weighted_tf)
