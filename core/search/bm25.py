"""BM25 over one user's messages, computed here rather than with FTS5's ``bm25()``.

FTS5 finds the candidates (cheap: the user's scope intersected with the query terms); the scores
use document frequencies within the user's own messages. FTS5's ``bm25()`` counts every phrase
over the whole table, all users included, which costs tens of milliseconds per common word once
the index holds millions of messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.retrieval import bm25
from core.retrieval.stemming import PORTER
from core.retrieval.text import fold_accents as fold
from core.retrieval.text import words

K1 = 1.2
B = 0.75


def stems(text: str) -> list[str]:
    """Porter stems of the text's words, as FTS5's porter tokenizer computes them."""
    return [PORTER.stem(w) for w in words(fold(text))]


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


idf = bm25.idf


def score(stats: TermStats, weights: Sequence[float], average: float) -> float:
    """BM25 of one message; ``weights``: each query term's idf."""
    norm = bm25.length_norm(B, stats.length / max(average, 1.0))
    return sum(bm25.term_score(f, idf=w, k1=K1, norm=norm)
               for w, f in zip(weights, stats.tf, strict=True) if f)
