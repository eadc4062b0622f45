"""50 users' first messages at once, on a local file database and over a remote one (issue 30).

One ``iris dev`` on loopback, its model a scripted OpenAI-compatible server in another process
(through litellm, answering at once). Each of ``--users`` users sends one first message through
the HTTP API, all at once; ``/healthz`` is probed every 0.5 s meanwhile. Two rounds, each with a
fresh ``IRIS_HOME``:

- file: the database is a local libSQL file;
- remote: the database is behind the Hrana test server (tests/fakes/hrana_server.py, a child
  process, libSQL's remote protocol as Turso speaks it) with ``--delay`` seconds added to every
  request (default 0.04: 40 ms per round trip).

Prints per round: time to answer p50/p99/max, turns per second (users / wall time of the
round), the slowest ``/healthz``, and for the remote round the Hrana requests per first message
(after-turn work included: counted once the server has been idle for a second). Then the
remote/local throughput ratio. Targets: ratio >= 1/3, p99 <= 5 s, /healthz <= 0.5 s.

    .venv/bin/python bench/many_users.py [--users 50] [--delay 0.04] [--only file|remote]
        [--hrana-log FILE] [--set IRIS_NAME=VALUE ...]

``--hrana-log FILE``: the Hrana server appends every request body it gets to FILE (the warm-up
turn's included), to see which statements a first message sends and how they are grouped.
``--set``: a setting for ``iris dev`` in both rounds (e.g. ``IRIS_POOL_THREADS=32``), to choose
concurrency settings from measurements.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import free_port, line, scripted_dev_env, serve_scripted_model, spawn, wait_up

ROOT = Path(__file__).resolve().parents[1]
KEY = "bench-key"
PROBE_SECONDS = 0.5


async def probe(url: str, stop: asyncio.Event) -> list[float]:
    """``/healthz`` answer times, one probe each PROBE_SECONDS, until ``stop``."""
    seen: list[float] = []
    async with httpx.AsyncClient(timeout=120) as client:
        while not stop.is_set():
            started = time.perf_counter()
            (await client.get(f"{url}/healthz")).raise_for_status()
            seen.append(time.perf_counter() - started)
            await asyncio.sleep(PROBE_SECONDS)
    return seen


async def first_messages(url: str, users: int) -> tuple[list[float], float, list[float]]:
    limits = httpx.Limits(max_connections=users + 10, max_keepalive_connections=users + 10)
    stop = asyncio.Event()
    probes = asyncio.create_task(probe(url, stop))
    async with httpx.AsyncClient(timeout=900, limits=limits) as client:

        async def one(n: int) -> float:
            started = time.perf_counter()
            response = await client.post(
                f"{url}/v1/chat/completions",
                headers={"Authorization": f"Bearer {KEY}"},
                json={
                    "model": "iris",
                    "user": f"user{n}",
                    "messages": [{"role": "user", "content": f"hello, I am user {n}"}],
                },
            )
            if response.status_code != 200:
                raise SystemExit(f"user{n}: HTTP {response.status_code} {response.text[:200]}")
            return time.perf_counter() - started

        started = time.perf_counter()
        times = list(await asyncio.gather(*(one(n) for n in range(users))))
        wall = time.perf_counter() - started
    stop.set()
    return times, wall, await probes


def settled_round_trips(stats_url: str) -> int:
    """The Hrana server's request count once it has seen none for a second (after-turn work)."""
    last, quiet_since = -1, time.monotonic()
    while True:
        now = httpx.get(stats_url, timeout=10).json()["round_trips"]
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= 1.0:
            return int(now)
        time.sleep(0.2)


def one_round(name: str, users: int, model_port: int, delay: float | None,
              hrana_log: str | None = None, settings: dict[str, str] | None = None) -> float:
    iris_port = free_port()
    with tempfile.TemporaryDirectory() as home:
        extra: dict[str, str] = {}
        children: list[subprocess.Popen[bytes]] = []
        stats_url = ""
        if delay is not None:
            hrana_port = free_port()
            token = "bench-hrana-token"
            children.append(
                spawn(
                    [
                        sys.executable,
                        "-m",
                        "tests.fakes.hrana_server",
                        "--port",
                        str(hrana_port),
                        "--db",
                        str(Path(home) / "remote.db"),
                        "--token",
                        token,
                        "--delay",
                        str(delay),
                        *(["--log", hrana_log] if hrana_log else []),
                    ],
                    {**os.environ, "PYTHONPATH": str(ROOT)},
                )
            )
            extra = {"IRIS_DB_URL": f"http://127.0.0.1:{hrana_port}", "IRIS_DB_AUTH_TOKEN": token}
            stats_url = f"http://127.0.0.1:{hrana_port}/_fake/stats"
        env = scripted_dev_env(home, KEY, model_port, **extra, **(settings or {}))
        dev = spawn(
            [
                sys.executable,
                "-m",
                "local_dev.cli",
                "dev",
                "--port",
                str(iris_port),
                "--tick",
                "3600",
            ],
            env,
        )
        children.append(dev)
        try:
            url = f"http://127.0.0.1:{iris_port}"
            wait_up(url, dev, seconds=300)
            asyncio.run(warm(url))
            before = settled_round_trips(stats_url) if stats_url else 0
            times, wall, health = asyncio.run(first_messages(url, users))
            rate = users / wall
            print(
                f"{name}: {users} first messages in {wall:.1f} s = {rate:.2f} turns/s; "
                f"load average {os.getloadavg()[0]:.1f}"
            )
            print("  " + line("answer", times))
            print("  " + line("/healthz", health))
            if stats_url:
                per = (settled_round_trips(stats_url) - before) / users
                print(f"  Hrana requests per first message (after-turn work included): {per:.1f}")
            return rate
        finally:
            for child in children:
                child.terminate()
            for child in children:
                try:
                    child.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    child.kill()
                    print(f"  pid {child.pid} ignored SIGTERM for 30 s: killed")


async def warm(url: str) -> None:
    """One turn first: the turn machinery loads on first use, not in the measured round."""
    async with httpx.AsyncClient(timeout=300) as client:
        response = await client.post(
            f"{url}/v1/chat/completions",
            headers={"Authorization": f"Bearer {KEY}"},
            json={
                "model": "iris",
                "user": "warmup",
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
        response.raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.04)
    parser.add_argument("--only", choices=["file", "remote"])
    parser.add_argument("--hrana-log", help="append the Hrana server's requests to this file")
    parser.add_argument("--set", action="append", default=[], metavar="IRIS_NAME=VALUE",
                        help="a setting for iris dev (repeatable)")
    parser.add_argument("--model-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model_server:
        serve_scripted_model(args.model_server, lambda body: "ok")
        return
    settings = dict(item.split("=", 1) for item in args.set)
    if any(not name.startswith("IRIS_") for name in settings):
        parser.error("--set takes IRIS_NAME=VALUE")
    model_port = free_port()
    model = spawn(
        [sys.executable, str(Path(__file__).resolve()), "--model-server", str(model_port)],
        {**os.environ, "PYTHONPATH": str(ROOT)},
    )
    print(
        f"{args.users} users' first messages at once against iris dev, scripted model; "
        f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}"
        + "".join(f"; {name}={value}" for name, value in settings.items())
    )
    try:
        rates = {}
        if args.only != "remote":
            rates["file"] = one_round("file", args.users, model_port, None, settings=settings)
        if args.only != "file":
            rates["remote"] = one_round(
                f"remote ({args.delay * 1000:.0f} ms per round trip)",
                args.users,
                model_port,
                args.delay,
                args.hrana_log,
                settings,
            )
        if len(rates) == 2:
            print(
                f"remote/local throughput = {rates['remote'] / rates['file']:.2f} (target >= 0.33)"
            )
        print("targets: p99 <= 5 s, /healthz max <= 0.5 s")
    finally:
        model.terminate()
        model.wait(timeout=30)


if __name__ == "__main__":
    main()
