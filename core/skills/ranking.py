"""Relevance of skills to a conversation: BM25F over name, tags, category, description and the
start of the body, with Snowball (Porter2) stemming, plus a small prior for skills that get used.

Documents are tokenised once per process and cached by content, so ranking a few hundred skills
for a new session costs milliseconds.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.retrieval import bm25
from core.skills.lexicon import concepts
from core.skills.records import SkillEntry
from core.skills.terms import terms

FIELDS = ("name", "tags", "category", "description", "body")
WEIGHTS = {"name": 3.0, "tags": 2.0, "category": 1.0, "description": 1.5, "body": 0.35}
LENGTH_NORM = {"name": 0.3, "tags": 0.3, "category": 0.0, "description": 0.75, "body": 0.75}
K1 = 2.0
CONCEPT_WEIGHT = 0.75  # a shared concept counts less than the same word
BODY_CHARS = 2000
USAGE_PRIOR = 0.08
STALE_FACTOR = 0.85
FAILING_FACTOR = 0.6  # keeps preceding failed turns (core.learning.skill_outcomes)


def with_concepts(words: list[str]) -> list[str]:
    """``words`` followed by the concept tokens (``~image``) they stand for."""
    table = concepts()
    return words + [c for word in words for c in table.get(word, ())]


@dataclass(frozen=True)
class _Doc:
    counts: dict[str, Counter[str]]
    lengths: dict[str, int]
    vocabulary: frozenset[str]


_docs: dict[tuple[str, str, str, str, str], _Doc] = {}
_docs_lock = threading.Lock()
MAX_CACHED_DOCS = 20_000


def _doc(entry: SkillEntry) -> _Doc:
    key = (entry.name, " ".join(entry.tags), entry.category or "", entry.description,
           entry.search_text[:BODY_CHARS])
    with _docs_lock:
        found = _docs.get(key)
    if found is not None:
        return found
    texts = dict(zip(FIELDS, (key[0].replace("-", " "), *key[1:]), strict=True))
    plain = {name: terms(text) for name, text in texts.items()}
    counts = {name: Counter(with_concepts(words)) for name, words in plain.items()}
    doc = _Doc(
        counts=counts, lengths={name: len(words) for name, words in plain.items()},
        vocabulary=frozenset().union(*counts.values()),
    )
    with _docs_lock:
        if len(_docs) >= MAX_CACHED_DOCS:
            _docs.clear()
        _docs[key] = doc
    return doc


@dataclass(frozen=True)
class Ranked:
    entry: SkillEntry
    score: float


def rank(entries: Sequence[SkillEntry], query: str,
         cosines: Mapping[str, float] | None = None) -> list[Ranked]:
    """Every entry, most relevant to ``query`` first. With ``cosines`` (skill name → similarity
    of its vectors to the query, ``core.skills.semantic``) the words ranking is fused with them
    (``core.skills.fusion``). A skill the query names verbatim ("pg-backup") comes first.
    Entries the query does not match follow, most used first, then by name."""
    scores = lexical_scores(entries, query)
    if cosines is not None:
        from core.skills.fusion import fuse

        scores = fuse(scores, [cosines.get(entry.name) for entry in entries])
    named = mentioned_names(query, [entry.name for entry in entries])
    ranked = []
    for entry, score in zip(entries, scores, strict=True):
        if score > 0:
            score *= 1 + USAGE_PRIOR * math.log1p(entry.usage.used)
            if entry.status == "stale":
                score *= STALE_FACTOR
            if entry.usage.failing:
                score *= FAILING_FACTOR
        ranked.append(Ranked(entry, score))
    ranked.sort(key=lambda r: (
        r.entry.name not in named, -r.score, r.entry.status == "stale", -r.entry.usage.used,
        -(r.entry.usage.last_used_at or 0), r.entry.name,
    ))
    return ranked


def lexical_scores(entries: Sequence[SkillEntry], query: str) -> list[float]:
    """BM25F of each entry for ``query`` (0: no match), before any prior."""
    docs = [_doc(entry) for entry in entries]
    wanted = list(dict.fromkeys(with_concepts(terms(query))))
    return _bm25f(docs, wanted) if wanted and docs else [0.0] * len(docs)


def mentioned_names(query: str, names: Sequence[str]) -> set[str]:
    """Skill names the query spells out: a hyphenated name anywhere ("run pg-backup now"), or
    any name as the whole query ("/pg-backup", "docker")."""
    folded = unicodedata.normalize("NFKC", query).casefold()
    whole = folded.strip().strip("/`'\"").strip()
    found = set()
    for name in names:
        spelled = "-" in name and name in folded and re.search(
            rf"(?<![\w-]){re.escape(name)}(?![\w-])", folded
        )
        if spelled or name == whole or name.replace("-", " ") == whole:
            found.add(name)
    return found


def _bm25f(docs: Sequence[_Doc], wanted: list[str]) -> list[float]:
    total = len(docs)
    average = {
        field: max(sum(d.lengths[field] for d in docs) / total, 1.0) for field in FIELDS
    }
    frequency = Counter(term for d in docs for term in set(wanted) & d.vocabulary)
    idf = {t: bm25.idf(total, frequency[t]) for t in wanted}
    scores = []
    for doc in docs:
        score = 0.0
        for term in wanted:
            if not frequency[term]:
                continue
            weighted = 0.0
            for field in FIELDS:
                tf = doc.counts[field].get(term)
                if tf:
                    norm = bm25.length_norm(LENGTH_NORM[field],
                                            doc.lengths[field] / average[field])
                    weighted += WEIGHTS[field] * tf / norm
            if weighted:
                share = CONCEPT_WEIGHT if term.startswith("~") else 1.0
                score += bm25.saturate(weighted, idf=share * idf[term], k1=K1)
        scores.append(score)
    return scores


def similarity(a: str, b: str) -> float:
    """Cosine similarity of two texts' stemmed content words (0..1)."""
    ca, cb = Counter(terms(a)), Counter(terms(b))
    if not ca or not cb:
        return 0.0
    dot = sum(ca[t] * cb[t] for t in ca.keys() & cb.keys())
    return dot / math.sqrt(sum(v * v for v in ca.values()) * sum(v * v for v in cb.values()))
