"""Semantic retrieval: message vectors (written after each turn, at import, by ``iris sessions
reindex`` and lazily by searches) and the messages of a user closest in meaning to a query.

Two encoders share one vector space: ``all-minilm-l6-v2`` (the full model, numpy; used for
queries, new turns and lazy backfill) and ``all-minilm-l6-v2-static`` (per-token vectors
distilled from it; ~1000x faster, for bulk loads with ``--fast``). Nothing here is imported on
the webhook ack path; the model loads once per process, on first use.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from core.search.encoder import MODEL_ID, BertEncoder, ModelMissing, model_zip
from core.search.static import StaticEncoder
from core.store.search import Filters
from core.store.vectors import VectorRows

if TYPE_CHECKING:
    from core.store import Store
    from core.store.sessions import StoredMessage

log = logging.getLogger("iris.search.embed")

FULL = MODEL_ID
STATIC = StaticEncoder.model_id
MODELS = (FULL, STATIC)
MAX_EMBED_CHARS = 8_000
BACKFILL_MESSAGES = 16     # per search, newest first
BACKFILL_SECONDS = 0.25    # per search
BATCH = 32

_lock = threading.RLock()  # loading, and the static encoder's lazily filled table
_encoders: dict[str, Any] = {}
_available: bool | None = None


def cache_dir() -> Path:
    """``$IRIS_EMBED_CACHE``, else ``$IRIS_HOME/cache/models``."""
    if os.environ.get("IRIS_EMBED_CACHE"):
        return Path(os.environ["IRIS_EMBED_CACHE"]).expanduser()
    home = Path(os.environ.get("IRIS_HOME") or "~/.iris").expanduser()
    return home / "cache" / "models"


def available() -> bool:
    """Whether the model package is installed (checked once per process)."""
    global _available
    if _available is None:
        try:
            model_zip()
            _available = True
        except ModelMissing:
            log.warning("semantic search is off: %s", ModelMissing.__doc__)
            _available = False
    return _available


def encoder(model: str = FULL) -> Any:
    """The encoder for ``model`` (loaded once per process). Raises ModelMissing."""
    if model not in MODELS:
        raise ValueError(f"unknown embedding model {model!r}; known: {', '.join(MODELS)}")
    found = _encoders.get(model)
    if found is not None:
        return found
    with _lock:
        if FULL not in _encoders:
            started = time.perf_counter()
            _encoders[FULL] = BertEncoder.load(cache_dir())
            log.info("loaded %s in %.2f s", FULL, time.perf_counter() - started)
        if model == STATIC and STATIC not in _encoders:
            _encoders[STATIC] = StaticEncoder(_encoders[FULL], cache_dir())
        return _encoders[model]


def embedding_text(stored: StoredMessage) -> str:
    message = stored.message
    parts = [message.content]
    if message.role == "tool" and message.name:
        parts.insert(0, f"[{message.name}]")
    parts.extend(f"{call.name}({call.arguments[:500]})" for call in message.tool_calls)
    return "\n".join(p for p in parts if p and p.strip())[:MAX_EMBED_CHARS]


def quantise(vectors: np.ndarray) -> list[bytes]:
    """int8 per component, scaled per vector so its largest component is ±127."""
    peak = np.maximum(np.abs(vectors).max(axis=1, keepdims=True), 1e-12)
    return [row.tobytes() for row in np.rint(vectors / peak * 127).astype(np.int8)]


def dequantise(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """Unit float32 rows from stored int8 blobs."""
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    matrix = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), dim)
    matrix = matrix.astype(np.float32)
    norms = np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return cast("np.ndarray", matrix / norms)


def embed_messages(
    store: Store, user_id: str, messages: Sequence[StoredMessage], model: str = FULL
) -> int:
    """Compute and store the vectors of ``messages`` (all of ``user_id``). Returns how many
    messages were written."""
    if not messages:
        return 0
    enc = encoder(model)
    texts = [embedding_text(m) for m in messages]
    todo = [i for i, text in enumerate(texts) if text]
    blobs: dict[int, list[bytes]] = {m.id: [] for m in messages}
    if todo:
        with _lock if model == STATIC else nullcontext():
            vectors, owners = enc.encode_chunks([texts[i] for i in todo], BATCH)
        for blob, owner in zip(quantise(vectors), owners, strict=True):
            blobs[messages[todo[owner]].id].append(blob)
    return store.vectors.put(user_id, model, blobs)


def backfill(
    store: Store, user_id: str, *, model: str = FULL, limit: int | None = None,
    seconds: float | None = None, session_id: str | None = None, upgrade: bool = False,
    progress: Any = None,
) -> int:
    """Embed with ``model`` the user's messages that have no vectors (with ``upgrade``: none of
    ``model``), newest first, stopping after ``limit`` messages or ``seconds``, whichever comes
    first. Returns how many were embedded."""
    started = time.perf_counter()
    done = 0
    while limit is None or done < limit:
        size = BATCH if limit is None else min(BATCH, limit - done)
        batch = store.vectors.missing(user_id, model if upgrade else None, limit=size,
                                      session_id=session_id)
        if not batch:
            break
        done += embed_messages(store, user_id, batch, model)
        if progress is not None:
            progress(len(batch))
        if len(batch) < size:  # that was all of them
            break
        if seconds is not None and time.perf_counter() - started >= seconds:
            break
    if model == STATIC and done:
        with _lock:
            encoder(STATIC).save()
    return done


@dataclass(frozen=True)
class ReindexReport:
    user_id: str
    embedded: int
    dropped: int
    seconds: float


def reindex(
    store: Store, user_id: str, *, fast: bool = False, force: bool = False,
    progress: Any = None,
) -> ReindexReport:
    """Give every message of the user vectors. Full (default): every message without full
    vectors is embedded, then static vectors are dropped (the full ones supersede them). Fast:
    messages with no vectors at all get static ones. ``force`` drops the user's vectors
    first."""
    started = time.perf_counter()
    dropped = store.vectors.delete(user_id) if force else 0
    if fast:
        done = backfill(store, user_id, model=STATIC, progress=progress)
    else:
        done = backfill(store, user_id, model=FULL, upgrade=True, progress=progress)
        dropped += store.vectors.delete(user_id, STATIC)
    return ReindexReport(user_id, done, dropped, time.perf_counter() - started)


@dataclass(frozen=True)
class Neighbours:
    """Cosine similarity of the query to each of the user's messages (best chunk), per model."""

    by_model: dict[str, dict[int, float]]

    def best(self, scale: Any) -> dict[int, float]:
        """Each message's best score over the models, after ``scale`` (per model: cosines of
        different encoders are not on one scale)."""
        out: dict[int, float] = {}
        for scores in self.by_model.values():
            for mid, value in scale(scores).items():
                if value > out.get(mid, -2.0):
                    out[mid] = value
        return out


def neighbours(store: Store, user_id: str, text: str, filters: Filters | None = None
               ) -> Neighbours:
    """The query's similarity to every embedded message of the user (within ``filters``)."""
    by_model: dict[str, dict[int, float]] = {}
    for model in store.vectors.counts(user_id):
        if model not in MODELS:
            continue
        rows = store.vectors.rows(user_id, model, filters)
        enc = encoder(model)
        kept = [i for i, blob in enumerate(rows.blobs) if len(blob) == enc.dim]
        if len(kept) < len(rows.blobs):
            log.warning("%d malformed vectors of %s skipped", len(rows.blobs) - len(kept),
                        user_id)
            rows = VectorRows([rows.message_ids[i] for i in kept], [rows.blobs[i] for i in kept])
        if not rows.message_ids:
            continue
        with _lock if model == STATIC else nullcontext():
            query = enc.encode([text])[0]
        sims = dequantise(rows.blobs, enc.dim) @ query
        ids = np.asarray(rows.message_ids, dtype=np.int64)
        order = np.lexsort((-sims, ids))  # by message id, best chunk first
        first = np.ones(len(order), dtype=bool)
        first[1:] = ids[order][1:] != ids[order][:-1]
        picked = order[first]
        by_model[model] = dict(zip(ids[picked].tolist(), sims[picked].tolist(), strict=True))
    return Neighbours(by_model)


def lazy_backfill(store: Store, user_id: str, filters: Filters | None = None) -> int:
    """A bounded catch-up run from a search: the newest unembedded messages first."""
    try:
        return backfill(store, user_id, limit=BACKFILL_MESSAGES, seconds=BACKFILL_SECONDS,
                        session_id=filters.session_id if filters else None)
    except Exception:
        log.exception("lazy embedding for %s failed; searching without it", user_id)
        return 0
