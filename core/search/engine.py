"""Ranked search over one user's messages.

The score of a message combines BM25 from the porter table (words, stemmed) and from the trigram
table (substrings, identifiers, CJK), each normalised by the best score of its list, plus hits of
short CJK terms. Two light priors follow: the strength of the message's session (a session with
several matching messages is more likely the one asked about) and recency.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.search.query import (
    ParsedQuery,
    parse_query,
    porter_expression,
    scope_expression,
    trigram_expression,
    trigram_terms,
)
from core.search.snippets import snippet, stem_prefix
from core.store.search import Filters

if TYPE_CHECKING:
    from core.store import Store

PORTER_WEIGHT = 0.7
TRIGRAM_WEIGHT = 0.3
SHORT_CJK_WEIGHT = 0.3
SESSION_WEIGHT = 0.2
RECENCY_WEIGHT = 0.05
RECENCY_DAYS = 60.0
COVERAGE_WEIGHT = 0.25
PERSON_WEIGHT = 0.15
MIN_CANDIDATES = 100
_TOKEN_RE = re.compile(r"\w+")


@dataclass(frozen=True)
class Hit:
    message_id: int
    session_id: str
    session_external_id: str | None
    external_id: str | None
    role: str
    created_at: float
    snippet: str
    score: float
    session_title: str | None
    compacted: bool
    content: str

    @property
    def public_session_id(self) -> str:
        """The id a caller knows the session by: the imported one, when it was imported."""
        return self.session_external_id or self.session_id

    def to_json(self, rank: int) -> dict[str, Any]:
        return {
            "rank": rank,
            "score": round(self.score, 6),
            "session_id": self.public_session_id,
            "iris_session_id": self.session_id,
            "session_title": self.session_title,
            "message_id": self.message_id,
            "external_id": self.external_id,
            "role": self.role,
            "timestamp": iso(self.created_at),
            "snippet": self.snippet,
            "compacted": self.compacted,
        }


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _normalised(scored: list[tuple[int, float]]) -> dict[int, float]:
    if not scored:
        return {}
    top = max(score for _, score in scored) or 1.0
    return {mid: score / top for mid, score in scored}


def candidate_scores(
    store: Store, user_id: str, query: ParsedQuery, filters: Filters, depth: int
) -> dict[int, float]:
    index = store.search
    scores: dict[int, float] = defaultdict(float)
    expression = porter_expression(query)
    if expression:
        porter = index.bm25(
            user_id, "messages_fts", scope_expression(user_id, trigram=False), expression,
            filters, depth,
        )
        for mid, value in _normalised(porter).items():
            scores[mid] += PORTER_WEIGHT * value
    substrings, short = trigram_terms(query)
    expression = trigram_expression(substrings)
    if expression:
        trigram = index.bm25(
            user_id, "messages_fts_tri", scope_expression(user_id, trigram=True), expression,
            filters, depth,
        )
        for mid, value in _normalised(trigram).items():
            scores[mid] += TRIGRAM_WEIGHT * value
    if short:
        for mid, found in index.contains(user_id, short, filters, depth):
            scores[mid] += SHORT_CJK_WEIGHT * found / len(short)
    return dict(scores)


def coverage(stems: set[str], text: str) -> float:
    """The share of the query's words (crudely stemmed) that occur in ``text``."""
    if not stems:
        return 1.0
    tokens = {stem_prefix(t) for t in _TOKEN_RE.findall(text.lower())}
    found = sum(1 for s in stems if s in tokens or (
        len(s) >= 4 and any(t.startswith(s) for t in tokens)))
    return found / len(stems)


def adjusted(
    query: ParsedQuery, scores: dict[int, float], messages: dict[int, Any]
) -> dict[int, float]:
    """Scores weighed by how many query words a message holds, and by who wrote it when the
    question says (first person: the user's own messages; second person: the agent's)."""
    stems = {stem_prefix(w) for w in query.words() if len(w) > 1}
    preferred = {"first": "user", "second": "assistant"}.get(query.person or "")
    out = {}
    for mid, score in scores.items():
        stored = messages.get(mid)
        if stored is None:
            continue
        value = score * (1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * coverage(
            stems, _searchable_text(stored)))
        if preferred and stored.message.role == preferred:
            value *= 1 + PERSON_WEIGHT
        out[mid] = value
    return out


def rank(
    scores: dict[int, float], messages: dict[int, Any], newest: float | None
) -> list[tuple[int, float]]:
    """Final scores: the message's own, lifted by its session's strength and by recency."""
    by_session: dict[str, list[float]] = defaultdict(list)
    for mid, score in scores.items():
        if mid in messages:
            by_session[messages[mid].session_id].append(score)
    weights = (1.0, 0.5, 0.25)
    strength = {
        sid: sum(v * w for v, w in zip(sorted(values, reverse=True), weights, strict=False))
        for sid, values in by_session.items()
    }
    top_session = max(strength.values(), default=1.0) or 1.0
    final = []
    for mid, score in scores.items():
        stored = messages.get(mid)
        if stored is None:
            continue
        value = score + SESSION_WEIGHT * strength[stored.session_id] / top_session
        if newest is not None:
            age_days = max(0.0, newest - stored.created_at) / 86400
            value *= 1 + RECENCY_WEIGHT * math.exp(-age_days / RECENCY_DAYS)
        final.append((mid, value))
    final.sort(key=lambda item: (-item[1], -item[0]))
    return final


def search_messages(
    store: Store, user_id: str, text: str, *, limit: int = 10, filters: Filters | None = None,
) -> list[Hit]:
    """The best ``limit`` messages of ``user_id`` for free-text ``text``, best first."""
    query = parse_query(text)
    if query.empty or limit <= 0:
        return []
    filters = filters or Filters()
    depth = max(MIN_CANDIDATES, limit * 10)
    scores = candidate_scores(store, user_id, query, filters, depth)
    messages = store.search.messages(user_id, list(scores))
    scores = adjusted(query, scores, messages)
    ranked = rank(scores, messages, store.search.newest(user_id))[:limit]
    meta = store.search.session_meta(
        user_id, sorted({messages[mid].session_id for mid, _ in ranked})
    )
    words = query.words()
    hits = []
    for mid, value in ranked:
        stored = messages[mid]
        info = meta.get(stored.session_id, {})
        text_of = _searchable_text(stored)
        hits.append(Hit(
            message_id=mid, session_id=stored.session_id,
            session_external_id=info.get("external_id"),  # type: ignore[arg-type]
            external_id=stored.external_id, role=stored.message.role,
            created_at=stored.created_at, snippet=snippet(text_of, words), score=value,
            session_title=info.get("title"),  # type: ignore[arg-type]
            compacted=stored.compacted, content=text_of,
        ))
    return hits


def _searchable_text(stored: Any) -> str:
    message = stored.message
    parts = [message.content]
    for call in message.tool_calls:
        parts.append(f"{call.name}({call.arguments})")
    return "\n".join(p for p in parts if p)
