"""Chat latency and server memory while someone attacks the server (issue 13).

The emulator (``iris dev``) runs in its own process on loopback, its model a scripted
OpenAI-compatible server in another process (reached through litellm). Two rounds of 200
concurrent chat requests (200 different users, one turn each):

- quiet: the 200 alone;
- attacked: the 200 while one request streams a 50 MB chunked body (no Content-Length) with a
  valid key, and one user's turn makes a ``terminal`` call whose command is the worst case for
  the command patterns (``"cat/" * 7999``, just under the tool's 32,000-character limit);
  ``/healthz`` is polled throughout.

Prints p50/p99 of the 200 in each round, what the two attackers got and how long they took,
the slowest ``/healthz``, and the server's peak resident memory (VmHWM from /proc/<pid>/status,
sampled every 20 ms as VmRSS too).

    .venv/bin/python bench/security_load.py [--users 200] [--body-mb 50]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from _common import free_port, health, line, scripted_dev_env, serve_scripted_model, spawn, wait_up

if TYPE_CHECKING:
    from iris_testing.llm_server import ToolCalls

WORST_COMMAND = "cat/" * 7999
TRIGGER = "RUN-WORST-CASE"
KEY = "bench-key"


def answer(body: dict[str, Any]) -> ToolCalls | str:
    """The scripted model: a terminal call for the trigger, plain answers otherwise."""
    from iris_testing.llm_server import ToolCall, ToolCalls

    last = body["messages"][-1]
    if last["role"] == "user" and TRIGGER in str(last.get("content")):
        return ToolCalls((ToolCall("terminal", {"command": WORST_COMMAND}),))
    return "ok"


def memory_kb(pid: int) -> dict[str, int]:
    found: dict[str, int] = {}
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = row.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0])
    return found


class Sampler:
    def __init__(self, pid: int):
        self.pid, self.peak_rss, self.running = pid, 0, True

    async def run(self) -> None:
        while self.running:
            self.peak_rss = max(self.peak_rss, memory_kb(self.pid)["VmRSS"])
            await asyncio.sleep(0.02)


async def chat(client: httpx.AsyncClient, url: str, user: str, text: str = "hi") -> float:
    started = time.perf_counter()
    response = await client.post(
        f"{url}/v1/chat/completions", headers={"Authorization": f"Bearer {KEY}"},
        json={"model": "iris", "messages": [{"role": "user", "content": text}], "user": user})
    response.raise_for_status()
    return time.perf_counter() - started


async def huge_body(url: str, megabytes: int) -> str:
    """Stream ``megabytes`` of JSON-ish bytes with no Content-Length; what came back."""
    chunk = b"x" * 65536
    sent = 0

    async def body():
        nonlocal sent
        yield b'{"messages": [{"role": "user", "content": "'
        while sent < megabytes * 1024 * 1024:
            sent += len(chunk)
            yield chunk
        yield b'"}]}'

    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=120) as client:
        try:
            response = await client.post(
                f"{url}/v1/chat/completions", content=body(),
                headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
            outcome = f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:  # the server may close the connection mid-upload
            outcome = f"connection closed ({type(exc).__name__})"
    took = time.perf_counter() - started
    return f"{outcome} after {sent / 1e6:.1f} MB sent, {took:.2f} s"


async def round_of(url: str, users: int, tag: str) -> list[float]:
    limits = httpx.Limits(max_connections=users + 10, max_keepalive_connections=users + 10)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        return list(await asyncio.gather(
            *(chat(client, url, f"{tag}{n}") for n in range(users))))


async def measure(url: str, pid: int, users: int, body_mb: int) -> None:
    sampler = Sampler(pid)
    sampling = asyncio.create_task(sampler.run())
    async with httpx.AsyncClient(timeout=120) as client:
        await chat(client, url, "warmup")  # litellm and the turn machinery load on first use
    idle = memory_kb(pid)
    print(f"server after one turn: VmRSS {idle['VmRSS'] / 1024:.0f} MB")

    stop = asyncio.Event()
    probes = asyncio.create_task(health(url, stop))
    quiet = await round_of(url, users, "quiet")
    stop.set()
    quiet_health = await probes
    after_quiet = memory_kb(pid)
    print(line("quiet", quiet))
    print(line("/healthz", quiet_health))
    print(f"          peak VmHWM {after_quiet['VmHWM'] / 1024:.0f} MB")

    stop = asyncio.Event()
    probes = asyncio.create_task(health(url, stop))

    async def attacker_turn() -> float:
        async with httpx.AsyncClient(timeout=300) as client:
            return await chat(client, url, "attacker", f"{TRIGGER} please")

    upload = asyncio.create_task(huge_body(url, body_mb))
    terminal = asyncio.create_task(attacker_turn())
    attacked = await round_of(url, users, "loaded")
    upload_result, terminal_took = await upload, await terminal
    stop.set()
    healthz = await probes
    sampler.running = False
    await sampling
    final = memory_kb(pid)
    print(line("attacked", attacked))
    print(line("/healthz", healthz))
    alone = await attacks_alone(url, body_mb)
    print(f"the two attacks alone, no other load: {alone}")
    print(f"50 MB chunked body: {upload_result}")
    print(f"terminal turn ({len(WORST_COMMAND):,}-char worst-case command): "
          f"{terminal_took * 1000:.0f} ms")
    print(f"server peak memory: VmHWM {final['VmHWM'] / 1024:.0f} MB "
          f"(sampled VmRSS peak {sampler.peak_rss / 1024:.0f} MB; "
          f"{(final['VmHWM'] - after_quiet['VmHWM']) / 1024:+.0f} MB over the quiet round)")


async def attacks_alone(url: str, body_mb: int) -> str:
    """The body and the terminal turn with nothing else running: their own cost, and the
    slowest /healthz while they run."""
    stop = asyncio.Event()
    probes = asyncio.create_task(health(url, stop))
    async with httpx.AsyncClient(timeout=300) as client:
        upload, took = await asyncio.gather(
            huge_body(url, body_mb), chat(client, url, "attacker2", f"{TRIGGER} again"))
    stop.set()
    slowest = max(await probes)
    return (f"body {upload}; terminal turn {took * 1000:.0f} ms; slowest /healthz "
            f"{slowest * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--body-mb", type=int, default=50)
    parser.add_argument("--model-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model_server:
        serve_scripted_model(args.model_server, answer)
        return
    model_port, iris_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as home:
        env = scripted_dev_env(home, KEY, model_port)
        children = [
            spawn([sys.executable, str(Path(__file__).resolve()), "--model-server",
                   str(model_port)], env),
            spawn([sys.executable, "-m", "local_dev.cli", "dev", "--port", str(iris_port),
                   "--tick", "3600"], env),
        ]
        try:
            url = f"http://127.0.0.1:{iris_port}"
            wait_up(url, children[1])
            print(f"{args.users} concurrent chat turns against iris dev (pid {children[1].pid}) "
                  f"on loopback, scripted model through litellm; {os.cpu_count()} CPUs")
            asyncio.run(measure(url, children[1].pid, args.users, args.body_mb))
        finally:
            for child in children:
                child.terminate()
            for child in children:
                child.wait(timeout=30)


if __name__ == "__main__":
    main()
