"""Per-turn cost as one session grows (issue 30: "flat cost per turn").

One ``iris dev`` on loopback with a local libSQL file, its model a scripted OpenAI-compatible
server in another process (through litellm, answering at once, so a turn's time is Iris'
own). One user sends, in one session (no gap long enough to start another), ``--turns`` plain
messages and then ``--turns`` tool messages (the model calls ``read_file``, gets the result,
answers), one at a time through the HTTP API, each after the one before was answered;
``--pause`` seconds between turns (0: back to back, so after-turn work such as indexing
competes with the next turn).

Prints the p50 of turns 2-5 and 16-20 of each series and their ratio (target: within 1.5x),
and the peak RSS of the ``iris dev`` process tree.

    .venv/bin/python bench/session_growth.py [--turns 20] [--pause 0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _common import free_port, scripted_dev_env, serve_scripted_model, spawn, stop_child, wait_up

ROOT = Path(__file__).resolve().parents[1]
KEY = "bench-key"


def answer(body: dict[str, Any]) -> dict[str, Any] | str:
    """Text for a plain message; for one asking to read, a read_file call, then text."""
    last = body["messages"][-1]
    if last.get("role") == "tool":
        return "I read it."
    text = last.get("content")
    if isinstance(text, list):
        text = " ".join(part.get("text", "") for part in text if isinstance(part, dict))
    if "please read" in str(text):
        return {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}
    return "ok"


def tree_rss_kib(pid: int) -> int:
    """RSS of ``pid`` and its descendants, in KiB."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += next(int(line.split()[1]) for line in status.splitlines()
                          if line.startswith("VmRSS:"))
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except (OSError, StopIteration):
            continue
        pending += [int(child) for child in children]
    return total


def run(turns: int, pause: float, model_port: int) -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        env = scripted_dev_env(home, KEY, model_port)
        dev = spawn([sys.executable, "-m", "local_dev.cli", "dev", "--port", str(port),
                     "--tick", "3600"], env)
        peak = 0
        try:
            url = f"http://127.0.0.1:{port}"
            wait_up(url, dev, seconds=300)
            times: dict[str, list[float]] = {"plain": [], "tool": []}
            with httpx.Client(timeout=300) as client:
                for kind in ("plain", "tool"):
                    for n in range(turns):
                        text = f"please read my notes ({n})" if kind == "tool" else f"hi #{n}"
                        started = time.perf_counter()
                        response = client.post(
                            f"{url}/v1/chat/completions",
                            headers={"Authorization": f"Bearer {KEY}"},
                            json={"model": "iris", "user": "grower",
                                  "messages": [{"role": "user", "content": text}]})
                        response.raise_for_status()
                        times[kind].append(time.perf_counter() - started)
                        said = response.json()["choices"][0]["message"]["content"]
                        if said != ("I read it." if kind == "tool" else "ok"):
                            raise SystemExit(f"{kind} turn {n}: unexpected answer {said!r}")
                        peak = max(peak, tree_rss_kib(dev.pid))
                        if pause:
                            time.sleep(pause)
            for kind, seen in times.items():
                early = statistics.median(seen[1:5])
                late = statistics.median(seen[15:20])
                print(f"{kind} turns: p50 turns 2-5 {early * 1000:.1f} ms, 16-20 "
                      f"{late * 1000:.1f} ms, ratio {late / early:.2f} (target <= 1.5)")
            print(f"peak RSS of iris dev and its children: {peak / 1024:.0f} MiB; "
                  f"load average {os.getloadavg()[0]:.1f}")
        finally:
            stop_child(dev)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--model-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model_server:
        serve_scripted_model(args.model_server, answer)
        return
    if args.turns < 20:
        parser.error("--turns must be at least 20 (turns 16-20 are compared)")
    model_port = free_port()
    model = spawn([sys.executable, str(Path(__file__).resolve()), "--model-server",
                   str(model_port)], {**os.environ, "PYTHONPATH": str(ROOT)})
    print(f"one session, {args.turns} plain then {args.turns} tool turns against iris dev, "
          f"scripted model; pause {args.pause} s; load average {os.getloadavg()[0]:.1f}")
    try:
        run(args.turns, args.pause, model_port)
    finally:
        model.terminate()
        model.wait(timeout=30)


if __name__ == "__main__":
    main()
