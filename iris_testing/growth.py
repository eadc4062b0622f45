"""How a cost grows with its input, measured inside one test: a ratio, never an absolute time.

A linear-time property is "eight times the input costs well under 64 times as long" (a quadratic
path costs 64 times). Both sides are timed in the same test, alternately, so a busy machine slows
both alike; each side is the fastest of a few rounds, because load can slow one round, not the
algorithm. The time is the thread's CPU time, which other processes do not inflate. Speed
targets (milliseconds) live in bench/, not here.

    assert_linear(lambda text: scan_text(text), small=text[:12_500], large=text)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

# Eight times the input: linear costs ~8x, quadratic ~64x; the bound sits three times above
# linear, so it takes a growth well past n log n to cross it.
LINEAR_LIMIT = 3.0
# A side repeated until one sample lasts this long, so the timer's resolution and the cost of
# the call itself do not decide the ratio.
_SAMPLE = 0.002
_MOST_REPEATS = 1 << 16


def _timed(run: Callable[[T], object], arg: T, repeat: int) -> float:
    # The thread's CPU time, not the wall clock: on a busy machine a longer sample is preempted
    # more often, which would inflate the ratio of wall times with nothing but the load.
    started = time.thread_time()
    for _ in range(repeat):
        run(arg)
    return time.thread_time() - started


def _calibrated(run: Callable[[T], object], arg: T) -> tuple[int, float]:
    """How many calls make one sample last ``_SAMPLE``, and the time of the last sample."""
    repeat = 1
    while (took := _timed(run, arg, repeat)) < _SAMPLE and repeat < _MOST_REPEATS:
        repeat *= 2
    return repeat, took


def growth(run: Callable[[T], object], small: T, large: T, *, rounds: int = 3) -> float:
    """Best time of ``run(large)`` over best time of ``run(small)``, alternated ``rounds`` times."""
    repeat, best_small = _calibrated(run, small)
    best_large = float("inf")
    for _ in range(rounds):
        best_small = min(best_small, _timed(run, small, repeat))
        best_large = min(best_large, _timed(run, large, repeat))
    return best_large / best_small


def assert_linear(run: Callable[[T], object], *, small: T, large: T, scale: float,
                  what: str = "the work", rounds: Sequence[int] = (1, 5)) -> float:
    """Fail unless ``run(large)`` costs under ``LINEAR_LIMIT * scale`` times ``run(small)``.

    ``scale`` is how many times larger ``large`` is. Measured with ``rounds[0]`` rounds first;
    only a ratio that looks too high is measured again with more rounds (a busy machine can
    spoil one round), which keeps a passing check cheap.
    """
    limit = LINEAR_LIMIT * scale
    ratio = float("inf")
    for count in rounds:
        ratio = growth(run, small, large, rounds=count)
        if ratio < limit:
            return ratio
    raise AssertionError(
        f"{what}: {scale:g}x the input cost {ratio:.1f}x the time (linear stays under "
        f"{limit:g}x)")
