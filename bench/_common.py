"""Shared helpers for the benchmarks: percentiles, a scripted model server, child processes."""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from iris_testing.llm_server import Handler

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(values: list[float], unit: str = "ms", scale: float = 1000.0) -> str:
    p50, p99 = percentile(values, 50) * scale, percentile(values, 99) * scale
    mean = statistics.fmean(values) * scale
    return f"p50 {p50:.1f} {unit}, p99 {p99:.1f} {unit}, mean {mean:.1f} {unit} (n={len(values)})"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def connect_when_up(port: int, deadline: float) -> socket.socket:
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=30)
        except OSError:
            if time.perf_counter() > deadline:
                raise
            time.sleep(0.002)


def spawn(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def scripted_dev_env(home: str, key: str, model_port: int, **extra: str) -> dict[str, str]:
    """The environment of an ``iris dev`` whose model is a scripted server on ``model_port``:
    no IRIS_ setting of the caller's, no side model calls (titles, reviews)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRIS_")}
    env.update(
        IRIS_HOME=home, IRIS_API_KEY=key, IRIS_MODEL="openai/scripted-model",
        IRIS_MODEL_API_BASE=f"http://127.0.0.1:{model_port}/v1", IRIS_MODEL_API_KEY="sk-x",
        IRIS_MODEL_RETRIES="0", IRIS_SESSION_TITLES="false", IRIS_MEMORY_REVIEW_EVERY="0",
        IRIS_MEMORY_REVIEW_AT_SESSION_END="false", LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYTHONPATH=str(ROOT), **extra,
    )
    return env


def wait_up(url: str, child: subprocess.Popen[bytes], seconds: float = 120.0) -> None:
    """Until ``url``/healthz answers 200; exits the bench if ``child`` dies or it never does."""
    import httpx

    deadline = time.monotonic() + seconds
    while True:
        if child.poll() is not None:
            raise SystemExit(f"the server exited with {child.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{url} did not come up")
        time.sleep(0.1)


async def health(url: str, stop: asyncio.Event) -> list[float]:
    """Every ``/healthz`` answer time until ``stop`` is set, one probe each 50 ms."""
    import httpx

    seen: list[float] = []
    async with httpx.AsyncClient(timeout=120) as client:
        while not stop.is_set():
            started = time.perf_counter()
            (await client.get(f"{url}/healthz")).raise_for_status()
            seen.append(time.perf_counter() - started)
            await asyncio.sleep(0.05)
    return seen


def line(name: str, values: list[float]) -> str:
    """One row of a load bench: p50, p99 and max of ``values`` (seconds) in ms."""
    return (f"{name:<9} p50 {percentile(values, 50) * 1000:7.0f} ms   "
            f"p99 {percentile(values, 99) * 1000:7.0f} ms   "
            f"max {max(values) * 1000:7.0f} ms   (n={len(values)})")


def serve_scripted_model(port: int, handler: Handler) -> None:
    """Serve ``iris_testing``'s scripted OpenAI-compatible model on ``port`` for good (a bench's
    model-server child), answering every request with ``handler(request_json)``."""
    from iris_testing.llm_server import ScriptedLLM
    from iris_testing.server import start_server

    llm = ScriptedLLM()
    llm.handler = handler
    start_server(llm.app, port=port)
    while True:
        time.sleep(3600)


def stop_child(child: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    """SIGTERM, then SIGKILL if the child is still there after ``seconds``."""
    child.terminate()
    try:
        child.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
