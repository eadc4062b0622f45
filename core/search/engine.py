"""Ranked search over one user's messages.

The score of a message combines BM25 from the porter table (words, stemmed) and from the trigram
table (substrings, identifiers, CJK), each normalised by the best score of its list, plus hits of
short CJK terms. Recency follows as a light prior (it breaks ties in favour of newer messages).
A lift for messages whose session has several matches used to follow too; on every recall set
(the real chats' held-out questions, the generated and the hand-written sets) ranking without
it was as good or better, so it went (docs/benchmarks.md, "Recall on real conversations,
second pass").
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from core.errors import NotFound
from core.search import bm25, context, dates
from core.search.query import (
    MAX_QUERY_CHARS,
    PERSON_WEIGHT,
    ParsedQuery,
    parse_query,
    porter_expression,
    quote,
    scope_expression,
    trigram_expression,
    trigram_terms,
)
from core.search.snippets import snippet
from core.store.search import Filters

if TYPE_CHECKING:
    from core.store import Store

log = logging.getLogger("iris.search")

PORTER_WEIGHT = 0.7
TRIGRAM_WEIGHT = 0.3
SHORT_CJK_WEIGHT = 0.3
RECENCY_WEIGHT = 0.05
RECENCY_DAYS = 60.0
COVERAGE_WEIGHT = 0.25
CANDIDATE_CAP = 600


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
    signals: tuple[str, ...] = ()

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
            "matched": list(self.signals),
        }


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _normalised(scored: dict[int, float]) -> dict[int, float]:
    top = max(scored.values(), default=0.0)
    if top <= 0:
        return {}
    return {mid: value / top for mid, value in scored.items() if value > 0}


def _bm25(
    ids: list[int], texts: dict[int, str], stats_of: Any, terms: list[Any], total: int,
    average: float, complete: bool, df_query: Any,
) -> tuple[dict[int, float], dict[int, list[int]]]:
    """BM25 of each candidate; document frequencies counted among the candidates when they are
    all the matches, else asked of the index."""
    per = {mid: stats_of(texts[mid], terms) for mid in ids if mid in texts}
    if complete:
        dfs = [sum(1 for st in per.values() if st.tf[i]) for i in range(len(terms))]
    else:
        dfs = [df_query(i) for i in range(len(terms))]
    weights = [bm25.idf(total, df) for df in dfs]
    return (
        {mid: bm25.score(st, weights, average) for mid, st in per.items()},
        {mid: st.tf for mid, st in per.items()},
    )


def score_messages(
    store: Store, user_id: str, query: ParsedQuery, filters: Filters, cap: int = CANDIDATE_CAP,
) -> tuple[dict[int, float], dict[int, Any]]:
    """Scores of the user's messages that match ``query``, and those messages."""
    index = store.search
    words = [t for t in query.terms if not t.cjk]
    porter_expr = porter_expression(query)
    porter_scope = scope_expression(user_id, trigram=False)
    porter_ids = index.match_ids(user_id, "messages_fts", porter_scope, porter_expr, filters,
                                 cap) if porter_expr else []
    substrings, short = trigram_terms(query)
    substrings = [s for s in substrings if not _short_plain_word(s)]
    tri_expr = trigram_expression(substrings)
    tri_scope = scope_expression(user_id, trigram=True)
    tri_ids = index.match_ids(user_id, "messages_fts_tri", tri_scope, tri_expr, filters,
                              cap) if tri_expr else []
    short_hits = dict(index.contains(user_id, short, filters, cap)) if short else {}
    messages = index.messages(user_id, list({*porter_ids, *tri_ids, *short_hits}))
    if not messages:
        return {}, {}
    texts = {mid: _searchable_text(stored) for mid, stored in messages.items()}
    total, average = index.stats(user_id)
    total = max(total, len(messages))
    scores: dict[int, float] = defaultdict(float)
    matched: dict[int, int] = defaultdict(int)
    if porter_ids:
        seqs = [bm25.phrase_stems(t.text) for t in words]
        porter, tfs = _bm25(
            porter_ids, texts, bm25.porter_stats, seqs, total, average, len(porter_ids) < cap,
            lambda i: index.count_matches("messages_fts", porter_scope, quote(words[i].text)),
        )
        for mid, value in _normalised(porter).items():
            scores[mid] += PORTER_WEIGHT * value
        for mid, tf in tfs.items():
            matched[mid] = sum(1 for f in tf if f)
    if tri_ids:
        trigram, tfs = _bm25(
            tri_ids, texts, bm25.substring_stats, substrings, total, average,
            len(tri_ids) < cap,
            lambda i: index.count_matches("messages_fts_tri", tri_scope, quote(substrings[i])),
        )
        for mid, value in _normalised(trigram).items():
            scores[mid] += TRIGRAM_WEIGHT * value
        if not words:
            for mid, tf in tfs.items():
                matched[mid] = sum(1 for f in tf if f)
    for mid, found in short_hits.items():
        scores[mid] += SHORT_CJK_WEIGHT * found / len(short)
    wanted = len(words) or len(substrings)
    preferred = {"first": "user", "second": "assistant"}.get(query.person or "")
    out = {}
    for mid, value in scores.items():
        if mid not in messages:
            continue
        if wanted:
            value *= 1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * min(1.0, matched[mid] / wanted)
        if preferred and messages[mid].message.role == preferred:
            value *= 1 + PERSON_WEIGHT
        out[mid] = value
    return out, messages


def rank(
    scores: dict[int, float], messages: dict[int, Any], newest: float | None
) -> list[tuple[int, float]]:
    """Final scores: the message's own, lifted a little by recency."""
    final = []
    for mid, score in scores.items():
        stored = messages.get(mid)
        if stored is None:
            continue
        value = score
        if newest is not None:
            age_days = max(0.0, newest - stored.created_at) / 86400
            value *= 1 + RECENCY_WEIGHT * math.exp(-age_days / RECENCY_DAYS)
        final.append((mid, value))
    final.sort(key=lambda item: (-item[1], -item[0]))
    return final


def _zone(store: Store, user_id: str, default: str | None) -> tzinfo:
    """The user's own time zone, else ``default``, else UTC (an unknown name counts as none)."""
    try:
        own = store.users.get(user_id).timezone
    except NotFound:
        own = None
    for name in (own, default):
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    return UTC


def search_messages(
    store: Store, user_id: str, text: str, *, limit: int = 10, filters: Filters | None = None,
    semantic: bool | None = None, now: float | None = None, timezone: str | None = None,
) -> list[Hit]:
    """The best ``limit`` messages of ``user_id`` for free-text ``text``, best first. With
    ``semantic`` (default: whenever the embedding model is installed) the words ranking is
    fused with the messages nearest in meaning (``core.search.hybrid``). Dates and relative
    times in the text ("last Tuesday", "on May 1") are resolved against ``now`` (default: the
    store's clock), as days in the user's time zone (theirs if set, else ``timezone``, the
    deployment's, else UTC): messages from those days come first. A speaker the query names
    has their turns lifted (``core.search.context``)."""
    if limit <= 0 or parse_query(text).empty:
        return []
    filters = filters or Filters()
    if semantic is None:
        from core.search.embed import available

        semantic = available()
    text = text[:MAX_QUERY_CHARS]
    at = store.clock.now() if now is None else now
    window = dates.resolve(text, at)
    if window is not None:  # the user's zone is read only for a query that names a day
        zone = _zone(store, user_id, timezone)
        window = dates.resolve(text, at, zone) if zone is not UTC else window
    if window is None:
        ranked, messages, signals, query = _ranked(store, user_id, text, filters, semantic)
    else:
        inside = Filters(
            session_id=filters.session_id, role=filters.role,
            since=max(window.since, filters.since or window.since),
            until=min(window.until, filters.until or window.until),
        )
        wanted = window.text if not parse_query(window.text).empty else text
        ranked, messages, signals, query = _ranked(store, user_id, wanted, inside, semantic)
        if len(ranked) < limit:
            more, others, more_signals, _ = _ranked(store, user_id, wanted, filters, semantic)
            seen = {mid for mid, _ in ranked}
            ranked += [(mid, value) for mid, value in more if mid not in seen]
            messages = {**others, **messages}
            signals = {**more_signals, **signals}
    ranked = ranked[:limit]
    meta = store.search.session_meta(
        user_id, sorted({messages[mid].session_id for mid, _ in ranked})
    )
    words = query.words()
    hits = []
    for mid, value in ranked:
        stored = messages[mid]
        info = meta.get(stored.session_id)
        text_of = _searchable_text(stored)
        hits.append(Hit(
            message_id=mid, session_id=stored.session_id,
            session_external_id=info["external_id"] if info else None,
            external_id=stored.external_id, role=stored.message.role,
            created_at=stored.created_at, snippet=snippet(text_of, words), score=value,
            session_title=info["title"] if info else None,
            compacted=stored.compacted, content=text_of, signals=signals.get(mid, ()),
        ))
    return hits


def _ranked(
    store: Store, user_id: str, text: str, filters: Filters, semantic: bool,
) -> tuple[list[tuple[int, float]], dict[int, Any], dict[int, tuple[str, ...]], ParsedQuery]:
    """Every candidate message with its final score, best first; the messages; the signals
    that found each; the parsed query."""
    speaker = context.named_speaker(store, user_id, text)
    if speaker is not None and not parse_query(speaker.text).empty:
        text = speaker.text
    query = parse_query(text)
    scores, messages = score_messages(store, user_id, query, filters)
    signals: dict[int, tuple[str, ...]] = dict.fromkeys(scores, ("lexical",))
    if semantic:
        from core.search.hybrid import add_semantic

        try:
            scores, messages, signals = add_semantic(
                store, user_id, text, query, filters, scores, messages
            )
        except Exception:
            log.exception("semantic search failed for %s; ranking by words only", user_id)
    if speaker is not None and speaker.name is not None:
        scores = context.lift_speaker(scores, messages, speaker.name)
    return rank(scores, messages, store.search.newest(user_id)), messages, signals, query


def _short_plain_word(term: str) -> bool:
    """A word of three or four ASCII letters: the porter table finds it as a word, while as a
    substring it mostly hits inside other words ("app" in "approach", "eat" in "creating")."""
    return term.isascii() and term.isalpha() and len(term) <= 4


def _searchable_text(stored: Any) -> str:
    message = stored.message
    parts = [message.content]
    if message.role == "tool" and message.name:
        parts.append(message.name)
    for call in message.tool_calls:
        parts.append(f"{call.name}({call.arguments})")
    return "\n".join(p for p in parts if p)
