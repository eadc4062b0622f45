"""Ordinary users' turns while other users attack the server's resources (issue 28).

One ``iris dev`` on loopback (bubblewrap isolation where installed), its model a scripted
OpenAI-compatible server in another process (reached through litellm), which also serves a
PDF content bomb on a second port. Two rounds of ``--users`` ordinary users (default 50), each
sending ``--turns`` messages one after the other, all users at once:

- quiet: the ordinary users alone;
- attacked: the same load while, at the same time,
  - 8 users each make a named pipe in their workspace and ``read_file`` it (``mkfifo p``);
  - one user makes a 1 GB sparse file and ``read_file``s it (``truncate -s 1G big.txt``);
  - 2 users ``web_extract`` the PDF bomb (300 pages sharing one 2 MB Flate content stream);
  - one user registers notification webhooks at loopback, link-local and private addresses.

Prints p50/p99 of the ordinary turns in each round and their ratio (the target: attacked p99
within 1.5x of quiet p99), the slowest ``/healthz`` of each round, what each attacker got and
how long it took, and the server's peak memory (VmHWM) after each round.

    .venv/bin/python bench/attack_load.py [--users 50] [--turns 3]
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
from typing import Any

import httpx
from _common import free_port, health, line, percentile, scripted_dev_env, spawn, wait_up

KEY = "bench-key"
FIFO_USERS = 8
PDF_USERS = 2
PRIVATE_URLS = ("http://127.0.0.1:6379/", "http://169.254.169.254/latest/meta-data/",
                "http://[::1]:8080/", "http://localhost:22/", "http://10.0.0.1/")


def serve_model(port: int, page_port: int) -> None:
    """The scripted model (plain answers; each attack's tool steps) and the bomb's page."""
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from iris_testing.hostile_documents import pdf_bomb
    from iris_testing.llm_server import ScriptedLLM, ToolCall, ToolCalls
    from iris_testing.server import start_server

    bomb_url = f"http://127.0.0.1:{page_port}/report.pdf"
    steps = {
        "fifo": [ToolCall("terminal", {"command": "rm -f p; mkfifo p"}),
                 ToolCall("read_file", {"path": "p"})],
        "sparse": [ToolCall("terminal", {"command": "truncate -s 1G big.txt"}),
                   ToolCall("read_file", {"path": "big.txt"})],
        "pdf": [ToolCall("web_extract", {"urls": [bomb_url]})],
    }

    def answer(body: dict[str, Any]) -> ToolCalls | str:
        messages = body["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        text = str(messages[last_user].get("content"))
        kind = next((k for k in steps if f"ATTACK:{k}" in text), None)
        if kind is None:
            return "ok"
        done = sum(1 for m in messages[last_user:] if m["role"] == "tool")
        if done < len(steps[kind]):
            return ToolCalls((steps[kind][done],))
        return f"{kind} done"

    llm = ScriptedLLM()
    llm.handler = answer
    bomb = pdf_bomb(pages=300)

    async def report(_request: object) -> Response:
        return Response(bomb, media_type="application/pdf")

    start_server(Starlette(routes=[Route("/report.pdf", report)]), port=page_port)
    start_server(llm.app, port=port)
    while True:
        time.sleep(3600)


def memory_mb(pid: int) -> float:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1]) / 1024
    return float("nan")


async def chat(client: httpx.AsyncClient, url: str, user: str, text: str) -> tuple[float, str]:
    started = time.perf_counter()
    response = await client.post(
        f"{url}/v1/chat/completions", headers={"Authorization": f"Bearer {KEY}"},
        json={"model": "iris", "messages": [{"role": "user", "content": text}], "user": user})
    took = time.perf_counter() - started
    if response.status_code != 200:
        return took, f"HTTP {response.status_code}"
    return took, response.json()["choices"][0]["message"]["content"][:80]


async def ordinary(url: str, users: int, turns: int, tag: str) -> list[float]:
    limits = httpx.Limits(max_connections=users + 20, max_keepalive_connections=users + 20)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:

        async def one(n: int) -> list[float]:
            times = []
            for turn in range(turns):
                took, said = await chat(client, url, f"{tag}{n}", f"hello {turn}")
                if said.startswith("HTTP"):
                    raise SystemExit(f"ordinary user {tag}{n}: {said}")
                times.append(took)
            return times

        return [t for times in await asyncio.gather(*(one(n) for n in range(users)))
                for t in times]


async def attacks(url: str) -> list[str]:
    """Every attack at once; one line per attacker: what it got and how long it took."""
    async with httpx.AsyncClient(timeout=900) as client:

        async def attacker(user: str, kind: str) -> str:
            took, said = await chat(client, url, user, f"ATTACK:{kind} please")
            return f"{user:<10} {kind:<7} {took:7.2f} s  {said!r}"

        async def webhooks() -> str:
            started = time.perf_counter()
            codes = []
            for target in PRIVATE_URLS:
                response = await client.put(
                    f"{url}/v1/notifications/webhook",
                    headers={"Authorization": f"Bearer {KEY}"},
                    json={"user": "ssrf", "url": target})
                codes.append(f"{target} -> {response.status_code}")
            took = time.perf_counter() - started
            return f"{'ssrf':<10} webhook {took:7.2f} s  " + "; ".join(codes)

        jobs = [attacker(f"fifo{n}", "fifo") for n in range(FIFO_USERS)]
        jobs += [attacker("sparse", "sparse")]
        jobs += [attacker(f"pdf{n}", "pdf") for n in range(PDF_USERS)]
        jobs += [webhooks()]
        return list(await asyncio.gather(*jobs))


async def measure(url: str, pid: int, users: int, turns: int) -> None:
    async with httpx.AsyncClient(timeout=120) as client:
        await chat(client, url, "warmup", "hi")  # the turn machinery loads on first use
    print(f"server after one turn: VmHWM {memory_mb(pid):.0f} MB")

    stop = asyncio.Event()
    probes = asyncio.create_task(health(url, stop))
    quiet = await ordinary(url, users, turns, "quiet")
    stop.set()
    quiet_health = await probes
    print(line("quiet", quiet))
    print(line("/healthz", quiet_health))
    print(f"          peak VmHWM {memory_mb(pid):.0f} MB")

    stop = asyncio.Event()
    probes = asyncio.create_task(health(url, stop))
    attacking = asyncio.create_task(attacks(url))
    attacked = await ordinary(url, users, turns, "loaded")
    stop.set()
    attacked_health = await probes
    print(line("attacked", attacked))
    print(line("/healthz", attacked_health))
    ratio = percentile(attacked, 99) / percentile(quiet, 99)
    print(f"          p99 attacked / quiet = {ratio:.2f} (target <= 1.5)")
    print(f"          peak VmHWM {memory_mb(pid):.0f} MB")
    started = time.perf_counter()
    results = await attacking
    print(f"attackers (finished {time.perf_counter() - started:.1f} s after the ordinary users):")
    for result in results:
        print("  " + result)
    print(f"server peak memory at the end: VmHWM {memory_mb(pid):.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--model-server", type=int, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model_server:
        serve_model(*args.model_server)
        return
    model_port, page_port, iris_port = free_port(), free_port(), free_port()
    with tempfile.TemporaryDirectory() as home:
        env = scripted_dev_env(home, KEY, model_port, IRIS_WEB_ALLOW_HOSTS=f"127.0.0.1:{page_port}")
        children = [
            spawn([sys.executable, str(Path(__file__).resolve()), "--model-server",
                   str(model_port), str(page_port)], env),
            spawn([sys.executable, "-m", "local_dev.cli", "dev", "--port", str(iris_port),
                   "--tick", "3600"], env),
        ]
        try:
            url = f"http://127.0.0.1:{iris_port}"
            wait_up(url, children[1])
            print(f"{args.users} ordinary users x {args.turns} turns against iris dev "
                  f"(pid {children[1].pid}) on loopback, scripted model through litellm; "
                  f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
            asyncio.run(measure(url, children[1].pid, args.users, args.turns))
        finally:
            for child in children:
                child.terminate()
            for child in children:
                try:
                    child.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    child.kill()
                    print(f"pid {child.pid} ignored SIGTERM for 30 s: killed")


if __name__ == "__main__":
    main()
