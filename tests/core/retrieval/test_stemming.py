"""The shared stemmers give every thread the same stems a single thread gets."""

from __future__ import annotations

import sys
import threading

import pytest

from core.retrieval.stemming import ENGLISH, PORTER, Stemmer

WORDS = [f"{base}{suffix}" for base in (
    "connect", "generalis", "relat", "condition", "hope", "run", "argu", "nation", "electric",
    "formal", "adjust", "depend", "organ", "photograph", "schedul", "compress",
) for suffix in ("", "s", "ed", "ing", "ation", "ational", "ness", "fulness", "ively", "izer")]


def stem_everywhere(stem, threads: int = 8, rounds: int = 30) -> list[dict[str, str]]:
    results: list[dict[str, str]] = [{} for _ in range(threads)]
    start = threading.Barrier(threads)

    def work(slot: int) -> None:
        start.wait()
        for _ in range(rounds):
            for word in WORDS[slot::2] + WORDS:
                got = stem(word)
                if results[slot].setdefault(word, got) != got:
                    results[slot][word] = "<inconsistent>"

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(old)
    return results


@pytest.mark.parametrize("algorithm", ["porter", "english"])
def test_concurrent_stemming_matches_sequential(algorithm):
    import snowballstemmer

    reference = snowballstemmer.stemmer(algorithm)
    expected = {word: reference.stemWord(word) for word in WORDS}
    uncached = Stemmer(algorithm, cache_size=0)  # every call reaches the shared object
    for found in stem_everywhere(uncached.stem):
        assert found == expected


def test_the_shared_stemmers_are_the_two_rankers_algorithms():
    assert PORTER.stem("generously") == "gener"  # Porter (1980), as FTS5's porter tokenizer
    assert ENGLISH.stem("generously") == "generous"  # Porter2

