"""The dashboard costs the webhook ack path nothing, and what its first request costs.

Each run starts a fresh uvicorn process serving the ack-only app (``_apps:ack_only_app``: the
worker handed off, as on Modal) and measures, from the process start:
- ack: the first byte of a streaming chat completion (the HTTP API's ack);
- then, in the same process, the first ``GET /ui/signin`` (imports Jinja2 and the dashboard,
  builds its app, renders a page) and a second one (warm).

With ``--baseline DIR`` (another checkout, e.g. main without the dashboard) the ack is measured
alternately in both trees, run by run, so load on the machine hits both alike. It also prints
how many modules the process has loaded once the app is built, in each tree.

Run: .venv/bin/python bench/dashboard_cold_start.py [--runs 9] [--baseline ../main]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, connect_when_up, free_port, percentile

ACK_BODY = json.dumps({"messages": [{"role": "user", "content": "hi"}], "user": "bench",
                       "stream": True}).encode()


def http(port: int, method: str, path: str, body: bytes = b"") -> bytes:
    sock = connect_when_up(port, time.perf_counter() + 60)
    with sock:
        sock.sendall((
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer bench-key\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode() + body)
        if method == "POST":
            return sock.recv(1)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data


def one_run(root: Path, *, ui: bool) -> tuple[float, float | None, float | None]:
    port = free_port()
    env = {**os.environ, "IRIS_HOME": tempfile.mkdtemp(prefix="iris-bench-"),
           "IRIS_API_KEY": "bench-key", "PYTHONPATH": f"{root}:{root / 'bench'}"}
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "_apps:ack_only_app", "--port", str(port),
         "--log-level", "warning"], cwd=root, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        assert http(port, "POST", "/v1/chat/completions", ACK_BODY), "no ack"
        ack = time.perf_counter() - start
        if not ui:
            return ack, None, None
        marks = []
        for _ in range(2):
            began = time.perf_counter()
            page = http(port, "GET", "/ui/signin")
            assert b" 200 " in page.split(b"\r\n", 1)[0], page[:200]
            marks.append(time.perf_counter() - began)
        return ack, marks[0], marks[1]
    finally:
        child.terminate()
        child.wait(timeout=10)


def modules_after_build(root: Path) -> int:
    code = ("import sys; from _apps import ack_only_app; ack_only_app(); "
            "print(len(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         env={**os.environ, "IRIS_HOME": tempfile.mkdtemp(),
                              "PYTHONPATH": f"{root}:{root / 'bench'}"}, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--baseline", type=Path, default=None)
    args = parser.parse_args()
    here, base = [], []
    first_ui, warm_ui = [], []
    for _ in range(args.runs):
        ack, cold, warm = one_run(ROOT, ui=True)
        here.append(ack)
        first_ui.append(cold or 0.0)
        warm_ui.append(warm or 0.0)
        if args.baseline:
            base.append(one_run(args.baseline.resolve(), ui=False)[0])
    print(f"cold start -> HTTP ack (worker handed off), this tree: p50 "
          f"{percentile(here, 50):.3f} s, max {max(here):.3f} s (n={len(here)}); "
          f"{modules_after_build(ROOT)} modules loaded after building the app")
    if args.baseline:
        print(f"cold start -> HTTP ack (worker handed off), {args.baseline}: p50 "
              f"{percentile(base, 50):.3f} s, max {max(base):.3f} s (n={len(base)}); "
              f"{modules_after_build(args.baseline.resolve())} modules loaded after building "
              "the app")
    print(f"first /ui request in a fresh process (imports Jinja2 + the dashboard): p50 "
          f"{percentile(first_ui, 50) * 1000:.0f} ms, max {max(first_ui) * 1000:.0f} ms")
    print(f"second /ui request: p50 {percentile(warm_ui, 50) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
