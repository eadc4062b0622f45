"""A static (per-token) distillation of the sentence encoder, for bulk embedding.

Each word piece gets a fixed vector: the full model's sentence vector of that token alone
([CLS] token [SEP]), scaled by a Zipf weight (BERT's vocabulary is roughly ordered by frequency,
so later ids are rarer and say more). A text's vector is the mean of its tokens' vectors,
normalised. Encoding is a table lookup: thousands of times faster than the full model, at some
cost in quality. Token vectors are distilled lazily, only for the tokens actually seen, and the
table is kept in the model cache directory between processes.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np

from core.search.encoder import CLS, MAX_CHUNKS, SEP, WINDOW, BertEncoder

log = logging.getLogger("iris.search.static")

FIRST_WORD_ID = 1996  # BERT uncased: ids below are special, unused or single characters


class StaticEncoder:
    model_id = "all-minilm-l6-v2-static"

    def __init__(self, full: BertEncoder, cache: Path | None = None):
        self.full = full
        self.dim = full.dim
        vocab = full.word.shape[0]
        self.path = cache / f"{self.model_id}-{vocab}.npz" if cache is not None else None
        self.table = np.zeros((vocab, self.dim), dtype=np.float32)
        self.known = np.zeros(vocab, dtype=bool)
        self.known[[0, CLS, SEP]] = True  # padding and the specials carry no meaning here
        rank = np.maximum(np.arange(vocab, dtype=np.float32) - FIRST_WORD_ID, 0) + 1
        self.weights = np.log1p(rank).astype(np.float32)
        self._unsaved = 0
        self._load()

    def _load(self) -> None:
        if self.path is None or not self.path.is_file():
            return
        try:
            with np.load(self.path) as saved:
                table, known = saved["table"], saved["known"]
        except (OSError, ValueError, KeyError):
            log.warning("ignoring an unreadable static token table at %s", self.path)
            return
        if table.shape == self.table.shape and known.shape == self.known.shape:
            self.table[known] = table[known].astype(np.float32)
            self.known |= known

    def save(self) -> None:
        """Write the distilled tokens next to the model (atomically; last writer wins, and any
        writer's table is valid)."""
        if self.path is None or not self._unsaved:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(prefix=".static-", suffix=".npz", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, table=self.table.astype(np.float16), known=self.known)
            os.replace(scratch, self.path)
            self._unsaved = 0
        finally:
            if os.path.exists(scratch):
                os.unlink(scratch)

    def distil(self, ids: Sequence[int], batch_size: int = 256) -> None:
        """Compute the vectors of tokens not distilled yet."""
        wanted = np.unique(np.asarray(ids, dtype=np.int64))
        missing = [int(t) for t in wanted if not self.known[t]]
        if not missing:
            return
        vectors = self.full.encode_ids([[CLS, t, SEP] for t in missing], batch_size)
        self.table[missing] = vectors * self.weights[missing, None]
        self.known[missing] = True
        self._unsaved += len(missing)

    def _embed(self, token_lists: list[list[int]]) -> np.ndarray:
        self.distil([t for ids in token_lists for t in ids])
        out = np.zeros((len(token_lists), self.dim), dtype=np.float32)
        for i, ids in enumerate(token_lists):
            if ids:
                out[i] = self.table[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return cast("np.ndarray", out / np.maximum(norms, 1e-12))

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        return self._embed([ids[:WINDOW - 2] for ids in self.full.token_ids(texts)])

    def encode_chunks(
        self, texts: Sequence[str], batch_size: int = 32
    ) -> tuple[np.ndarray, list[int]]:
        token_lists: list[list[int]] = []
        owners: list[int] = []
        for i, ids in enumerate(self.full.token_ids(texts)):
            for chunk in self.full.chunks(ids)[:MAX_CHUNKS]:
                token_lists.append(chunk[1:-1])
                owners.append(i)
        return self._embed(token_lists), owners
