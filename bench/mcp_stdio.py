"""Benchmark: connect to mcp-server-time over stdio and make the first get_current_time call.

    .venv/bin/python bench/mcp_stdio.py --runs 10

Prints the import time of ``mcp`` (fresh interpreter each time), then p50/p99 of
"open the connection + first call" and of closing it, then what a turn pays through Iris'
MCP tool provider: the first turn of a process (connect to list tools), a warm turn that calls
no MCP tool, and a warm turn that calls one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config.mcp import McpServerConfig
from core.mcp.client import McpConnections

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


async def provider_turn(ctx: object, call: bool) -> float:
    from core.acting.mcp_tools import mcp_tools
    from core.contracts.toolkit import Toolset
    from core.messages import ToolCall

    started = time.perf_counter()
    async with mcp_tools(ctx) as tools:  # type: ignore[arg-type]
        if call:
            request = ToolCall(id="c1", name="mcp__time__get_current_time",
                               arguments='{"timezone": "Europe/Berlin"}')
            result = await Toolset(tools).call(ctx, request)  # type: ignore[arg-type]
            if "Error" in result.content:
                raise SystemExit(result.content)
    return time.perf_counter() - started


def provider_context(config: McpServerConfig) -> object:
    from types import SimpleNamespace

    from core.config import load_settings

    server = config.model_dump(include={"command", "args"})
    settings = load_settings({"IRIS_HOME": "/nonexistent", "IRIS_MCP_SERVERS": json.dumps(
        {"time": server})})
    return SimpleNamespace(settings=settings)


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

    from core.acting.mcp_tools import forget_tools

    ctx = provider_context(config)
    cold, warm_idle, warm_call = [], [], []
    for _ in range(args.runs):
        forget_tools()
        cold.append(asyncio.run(provider_turn(ctx, call=False)))
        warm_idle.append(asyncio.run(provider_turn(ctx, call=False)))
        warm_call.append(asyncio.run(provider_turn(ctx, call=True)))
    report("turn, first in process (list)", cold)
    report("turn, warm, no MCP call", warm_idle)
    report("turn, warm, one MCP call", warm_call)


if __name__ == "__main__":
    main()
