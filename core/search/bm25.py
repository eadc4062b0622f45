"""BM25 over one user's messages, computed here rather than with FTS5's ``bm25()``.

FTS5 finds the candidates (cheap: the user's scope intersected with the query terms); the scores
use document frequencies within the user's own messages. FTS5's ``bm25()`` counts every phrase
over the whole table, all users included, which costs tens of milliseconds per common word once
the index holds millions of messages.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

K1 = 1.2
B = 0.75
_WORD_RE = re.compile(r"[^\W_]+")
_stemmer: object | None = None


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Porter stem, as FTS5's porter tokenizer computes it."""
    global _stemmer
    if _stemmer is None:
        import snowballstemmer

        _stemmer = snowballstemmer.stemmer("porter")
    return _stemmer.stemWord(word)  # type: ignore[attr-defined]


def fold(text: str) -> str:
    """Lowercase without diacritics (what both tokenizers match on)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def stems(text: str) -> list[str]:
    return [stem(w) for w in _WORD_RE.findall(fold(text))]


def phrase_stems(term: str) -> tuple[str, ...]:
    return tuple(stems(term))


def count_sequence(tokens: Sequence[str], seq: tuple[str, ...]) -> int:
    if not seq:
        return 0
    if len(seq) == 1:
        return tokens.count(seq[0])
    n = len(seq)
    return sum(1 for i in range(len(tokens) - n + 1) if tuple(tokens[i:i + n]) == seq)


@dataclass(frozen=True)
class TermStats:
    """Per message: term frequencies (one per query term) and length in characters."""

    tf: list[int]
    length: int


def porter_stats(text: str, terms: Sequence[tuple[str, ...]]) -> TermStats:
    tokens = stems(text)
    return TermStats([count_sequence(tokens, t) for t in terms], len(text))


def substring_stats(text: str, substrings: Sequence[str]) -> TermStats:
    folded = fold(text)
    return TermStats([folded.count(fold(s)) for s in substrings], len(text))


def idf(total: int, df: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def score(stats: TermStats, weights: Sequence[float], average: float) -> float:
    norm = K1 * (1 - B + B * stats.length / max(average, 1.0))
    return sum(w * f * (K1 + 1) / (f + norm) for w, f in zip(weights, stats.tf, strict=True)
               if f)
