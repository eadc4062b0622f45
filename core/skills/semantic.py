"""Dense vectors of skills for routing: how close in meaning a conversation is to each skill.

A skill has a few vectors (all-MiniLM-L6-v2, the encoder of ``core.search.embed``): its name
with each sentence of its description ("pg backup: Backs up a PostgreSQL database…", "pg
backup: Use when the user asks for a restore…"); its similarity to a message is the best of
them. Vectors are computed once per skill version: when a skill is created, patched, imported
or rolled back (``refresh``), and lazily for skills that have none (``skill_vectors``, bounded
per call). A user's skill vectors are stored under that user's id; bundled skills' under
``SYSTEM_SCOPE`` and in a per-process cache.

Without the model package everything here answers None and routing uses words only. numpy and
the model load only when this module is used, never on the webhook ack path.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.search import embed
from core.skills.records import SkillEntry
from core.store.skill_vectors import SYSTEM_SCOPE, SkillVectors, StoredVectors

log = logging.getLogger("iris.skills.semantic")

MODEL = embed.FULL
RECIPE = "name+sentence/1"
MAX_SENTENCES = 8
PIECE_WORDS = 60
MAX_QUERY_CHARS = 1_000
BACKFILL_SECONDS = 2.0  # per ranking; skills still without vectors then rank by words only
BATCH_SKILLS = 8  # skills encoded between two looks at the clock
MAX_CACHED = 2048  # skill texts whose vectors this process keeps (a few MB)

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_HAS_WORD = re.compile(r"[^\W_]", re.UNICODE)


@dataclass(frozen=True)
class _Encoded:
    blobs: list[bytes]  # as stored
    matrix: np.ndarray  # as read back: unit rows


_cache: OrderedDict[str, _Encoded] = OrderedDict()
_cache_lock = threading.Lock()


def available() -> bool:
    """Whether the embedding model is installed (checked once per process)."""
    return embed.available()


def skill_texts(entry: SkillEntry) -> list[str]:
    """The texts embedded for a skill: its name, then one sentence of its description, for each
    sentence (a run-on sentence is cut into pieces of ``PIECE_WORDS`` words)."""
    name = entry.name.replace("-", " ")
    pieces: list[str] = []
    for sentence in _SENTENCE.split(" ".join(entry.description.split())):
        words = sentence.split()
        pieces += [" ".join(words[i:i + PIECE_WORDS]) for i in range(0, len(words), PIECE_WORDS)]
    return list(dict.fromkeys(f"{name}: {piece}" for piece in pieces[:MAX_SENTENCES])) or [name]


def text_digest(texts: Sequence[str]) -> str:
    joined = "\x1f".join([MODEL, RECIPE, *texts])
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:32]


def _cached(digest: str) -> _Encoded | None:
    with _cache_lock:
        found = _cache.get(digest)
        if found is not None:
            _cache.move_to_end(digest)
        return found


def _remember(digest: str, encoded: _Encoded) -> None:
    with _cache_lock:
        _cache[digest] = encoded
        _cache.move_to_end(digest)
        while len(_cache) > MAX_CACHED:
            _cache.popitem(last=False)


def _encode(groups: dict[str, list[str]]) -> dict[str, _Encoded]:
    """Vectors for each group of texts (by digest): from this process's cache (a vector is a
    function of its text alone), the rest encoded in one batch."""
    out = {digest: found for digest in groups if (found := _cached(digest)) is not None}
    todo = [digest for digest in groups if digest not in out]
    if todo:
        flat = [text for digest in todo for text in groups[digest]]
        vectors = embed.encoder(MODEL).encode(flat)
        at = 0
        for digest in todo:
            blobs = embed.quantise(vectors[at:at + len(groups[digest])])
            at += len(groups[digest])
            out[digest] = _Encoded(blobs, embed.dequantise(blobs, vectors.shape[1]))
            _remember(digest, out[digest])
    return out


def _scope(user_id: str, entry: SkillEntry) -> str:
    return SYSTEM_SCOPE if entry.bundled else user_id


def _usable(found: StoredVectors | None, entry: SkillEntry, digest: str) -> np.ndarray | None:
    if found is None or found.version != entry.version or found.digest != digest:
        return None
    dim = embed.encoder(MODEL).dim
    if any(len(blob) != dim for blob in found.blobs):
        return None
    return embed.dequantise(found.blobs, dim)


def refresh(repo: SkillVectors, user_id: str, entries: Sequence[SkillEntry]) -> int:
    """Compute and store the vectors of ``entries`` (the user's skills, or bundled ones).
    Returns how many skills got vectors."""
    return len(_compute(repo, user_id, [e for e in entries if e.status != "archived"]))


def _compute(repo: SkillVectors, user_id: str, entries: Sequence[SkillEntry]) -> list[np.ndarray]:
    """Encode and store ``entries``' vectors; returns them as read back (unit rows)."""
    if not entries:
        return []
    if any(not e.bundled for e in entries) and not user_id:
        raise ValueError("a library skill's vectors need its owner")
    digests = []
    groups: dict[str, list[str]] = {}
    for entry in entries:
        texts = skill_texts(entry)
        digests.append(text_digest(texts))
        groups[digests[-1]] = texts
    encoded = _encode(groups)
    for entry, digest in zip(entries, digests, strict=True):
        repo.put(_scope(user_id, entry), MODEL, entry.name, entry.version, digest,
                 encoded[digest].blobs)
    return [encoded[digest].matrix for digest in digests]


def refresh_quietly(repo: SkillVectors, user_id: str, entries: Sequence[SkillEntry]) -> None:
    """``refresh`` after a write: a failure is logged, never raised (the skill is stored; its
    vectors are recomputed on the next ranking)."""
    try:
        if available():
            refresh(repo, user_id, entries)
    except Exception:
        log.exception("skill vectors for %s not refreshed; they will be computed lazily",
                      user_id)


def skill_vectors(repo: SkillVectors, user_id: str, entries: Sequence[SkillEntry], *,
                  seconds: float = BACKFILL_SECONDS) -> dict[str, np.ndarray] | None:
    """Each entry's vectors (unit rows), computing the missing ones for up to ``seconds``.
    None when some are still missing: rank by words alone this time rather than favour the
    skills that happen to have vectors."""
    own = repo.load(user_id, MODEL) if user_id else {}
    system: dict[str, StoredVectors] | None = None
    found: dict[str, np.ndarray] = {}
    missing: list[SkillEntry] = []
    for entry in entries:
        digest = text_digest(skill_texts(entry))
        if entry.bundled:
            remembered = _cached(digest)
            cached = remembered.matrix if remembered is not None else None
            if cached is None:
                if system is None:
                    system = repo.load(SYSTEM_SCOPE, MODEL)
                cached = _usable(system.get(entry.name), entry, digest)
        else:
            cached = _usable(own.get(entry.name), entry, digest)
        if cached is None:
            missing.append(entry)
        else:
            found[entry.name] = cached
    started = time.perf_counter()
    while missing and time.perf_counter() - started < seconds:
        batch, missing = missing[:BATCH_SKILLS], missing[BATCH_SKILLS:]
        for entry, matrix in zip(batch, _compute(repo, user_id, batch), strict=True):
            found[entry.name] = matrix
    if missing:
        log.info("%d skills of %s still have no vectors; ranking by words", len(missing),
                 user_id)
        return None
    return found


def similarities(repo: SkillVectors, user_id: str, entries: Sequence[SkillEntry], query: str
                 ) -> dict[str, float] | None:
    """Cosine similarity of ``query`` to each entry (its closest vector), by skill name; None
    when the model is not installed, the query has no words, or vectors are not ready."""
    if not entries or not _HAS_WORD.search(query) or not available():
        return None
    vectors = skill_vectors(repo, user_id, entries)
    if vectors is None:
        return None
    names = list(vectors)
    matrix = np.concatenate([vectors[name] for name in names])
    starts = np.cumsum([0] + [len(vectors[name]) for name in names[:-1]])
    query_vector = embed.encoder(MODEL).encode([query[:MAX_QUERY_CHARS]])[0]
    best = np.maximum.reduceat(matrix @ query_vector, starts)
    return dict(zip(names, best.tolist(), strict=True))
