"""Cold process start → HTTP ack of an inbound message, and → first turn done.

Each run starts a fresh Python process serving the Iris app (``uvicorn --factory …``, the same
app factory Modal's web function uses), then sends one request as soon as the port accepts
connections:
- ack: a streaming chat completion; its first byte is written once the message is durably in the
  inbox and a worker has been dispatched. Measured with the worker handed off (Modal: spawned in
  another container) and with the emulator's in-process worker, whose first turn imports litellm
  in the same process and competes with the ack for the CPU;
- turn: a plain chat completion answered (a) by an in-process scripted model, which measures
  Iris' own path, and (b) by a scripted OpenAI-compatible model server over HTTP through litellm,
  which adds importing litellm in the fresh process.

Run: .venv/bin/python bench/cold_start.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from _common import ROOT, connect_when_up, free_port, percentile, spawn


def request(path_body: bytes, port: int, key: str) -> bytes:
    return (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(path_body)}\r\nConnection: close\r\n\r\n"
    ).encode() + path_body


def one_run(stream: bool, model_url: str, factory: str = "functions.asgi:build") -> float:
    port = free_port()
    home = tempfile.mkdtemp(prefix="iris-bench-")
    env = {
        **os.environ, "IRIS_HOME": home, "IRIS_API_KEY": "bench-key",
        "IRIS_MODEL": "openai/scripted-model", "IRIS_MODEL_API_BASE": f"{model_url}/v1",
        "IRIS_MODEL_API_KEY": "x", "PYTHONPATH": f"{ROOT}:{ROOT / 'bench'}",
    }
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "user": "bench",
                       "stream": stream}).encode()
    start = time.perf_counter()
    child = spawn([sys.executable, "-m", "uvicorn", "--factory", factory,
                   "--port", str(port), "--log-level", "warning"], env)
    try:
        sock = connect_when_up(port, start + 60)
        with sock:
            sock.sendall(request(body, port, "bench-key"))
            if stream:
                first = sock.recv(1)
                elapsed = time.perf_counter() - start
                assert first, "no answer"
            else:
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
                elapsed = time.perf_counter() - start
                assert b" 200 " in data.split(b"\r\n", 1)[0], data[:300]
        return elapsed
    finally:
        child.terminate()
        child.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    from iris_testing.llm_server import ScriptedLLM
    from iris_testing.server import start_server

    llm = ScriptedLLM()
    llm.handler = lambda request: "hello"
    server = start_server(llm.app)
    try:
        acks = [one_run(True, server.url, "_apps:ack_only_app") for _ in range(args.runs)]
        local_acks = [one_run(True, server.url) for _ in range(args.runs)]
        own = [one_run(False, server.url, "_apps:scripted_app") for _ in range(args.runs)]
        turns = [one_run(False, server.url) for _ in range(args.runs)]
    finally:
        server.stop()
    print(f"cold start -> HTTP ack (first SSE byte; worker handed off as on Modal): "
          f"p50 {percentile(acks, 50):.3f} s, max {max(acks):.3f} s "
          f"(n={len(acks)}; target <= 0.3 s)")
    print(f"cold start -> HTTP ack, emulator (worker in the same process): "
          f"p50 {percentile(local_acks, 50):.3f} s, max {max(local_acks):.3f} s")
    print(f"cold start -> first turn done (in-process scripted model, no litellm): "
          f"p50 {percentile(own, 50):.3f} s, max {max(own):.3f} s (n={len(own)})")
    print(f"cold start -> first turn done (litellm -> scripted model server over HTTP): "
          f"p50 {percentile(turns, 50):.3f} s, max {max(turns):.3f} s "
          f"(n={len(turns)}; target <= 1.5 s)")


if __name__ == "__main__":
    main()
