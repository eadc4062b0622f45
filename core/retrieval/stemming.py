"""Thread-safe Snowball stemmers with a per-process cache.

A ``snowballstemmer`` stemmer object keeps its working state on the instance, so two threads
stemming with one object can corrupt each other's result (session search runs in worker
threads). Each ``Stemmer`` here guards its object with a lock; the cache in front of it means
the lock is only taken for words not seen before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Protocol


class _Snowball(Protocol):
    def stemWord(self, word: str) -> str: ...


class Stemmer:
    def __init__(self, algorithm: str, *, cache_size: int):
        self.algorithm = algorithm
        self._lock = threading.Lock()
        self._impl: _Snowball | None = None
        self.stem: Callable[[str], str] = lru_cache(maxsize=cache_size)(self._stem)

    def _stem(self, word: str) -> str:
        with self._lock:
            if self._impl is None:
                import snowballstemmer

                self._impl = snowballstemmer.stemmer(self.algorithm)
            return self._impl.stemWord(word)


# Porter (1980), as SQLite FTS5's porter tokenizer stems: session search re-scores FTS5's
# candidates and must agree with it.
PORTER = Stemmer("porter", cache_size=200_000)
# Porter2 ("english"), a better stemmer for matching skills to requests.
ENGLISH = Stemmer("english", cache_size=65_536)
