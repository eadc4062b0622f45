"""Round-trip latency of LocalSandbox.exec.

Usage: python bench/sandbox_exec.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from sandboxes.local import LocalSandbox


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def measure(sandbox: LocalSandbox, command: str, runs: int) -> list[float]:
    for _ in range(5):
        await sandbox.exec(command)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        result = await sandbox.exec(command)
        samples.append(time.perf_counter() - started)
        assert result.exit_code == 0, result
    return samples


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as home:
        sandbox = LocalSandbox("bench", home=Path(home))
        for command in ("true", "echo hi"):
            samples = await measure(sandbox, command, runs)
            print(
                f"local exec({command!r}) x{runs}: "
                f"p50 {percentile(samples, 0.5) * 1000:.2f} ms, "
                f"p99 {percentile(samples, 0.99) * 1000:.2f} ms, "
                f"mean {statistics.fmean(samples) * 1000:.2f} ms"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    asyncio.run(main(parser.parse_args().runs))
