"""Benchmark: connect to mcp-server-time over stdio and make the first get_current_time call.

    .venv/bin/python bench/mcp_stdio.py --runs 10

Prints the import time of ``mcp`` (fresh interpreter each time), then p50/p99 of
"open the connection + first call" and of closing it.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.mcp.client import McpConnections
from core.mcp.config import McpServerConfig

IMPORT_PROBE = "import time; t = time.perf_counter(); import mcp; print(time.perf_counter() - t)"


def time_server() -> McpServerConfig:
    script = Path(sys.executable).parent / "mcp-server-time"
    if script.exists():
        return McpServerConfig(command=str(script))
    return McpServerConfig(command=sys.executable, args=["-m", "mcp_server_time"])


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def import_seconds(runs: int) -> list[float]:
    return [
        float(subprocess.check_output([sys.executable, "-c", IMPORT_PROBE], text=True))
        for _ in range(runs)
    ]


async def connect_and_call(config: McpServerConfig) -> tuple[float, float]:
    started = time.perf_counter()
    async with McpConnections({"time": config}) as mcp:
        if mcp.failures():
            raise SystemExit(mcp.failures()["time"])
        result = await mcp.call("mcp__time__get_current_time", {"timezone": "Europe/Berlin"})
        if result.is_error:
            raise SystemExit(result.text)
        ready = time.perf_counter()
    return ready - started, time.perf_counter() - ready


def report(label: str, samples: list[float]) -> None:
    print(
        f"{label:<34} p50 {statistics.median(samples) * 1000:7.0f} ms   "
        f"p99 {percentile(samples, 0.99) * 1000:7.0f} ms   (n={len(samples)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()

    report("import mcp (fresh interpreter)", import_seconds(max(3, args.runs // 2)))

    config = time_server()
    asyncio.run(connect_and_call(config))
    opens, closes = [], []
    for _ in range(args.runs):
        opened, closed = asyncio.run(connect_and_call(config))
        opens.append(opened)
        closes.append(closed)
    report("connect + first get_current_time", opens)
    report("close (server shutdown)", closes)


if __name__ == "__main__":
    main()
