"""Cold start to a first answer: Iris against Hermes Agent, on the same machine and model.

Both talk to one scripted OpenAI-compatible model server (another process, answering "ok" at
once), so the figures are each agent's own start and turn:

- Hermes: ``hermes -z "hello"`` (its one-shot mode: only the final answer on stdout) with a
  fresh ``HERMES_HOME`` whose config.yaml points ``model`` at the scripted server
  (``provider: custom``): from spawning the process to the answer on its stdout, and to the
  process's exit.
- Iris: a fresh ``iris dev`` (fresh ``IRIS_HOME``, local libSQL file): from spawning the process
  to the answer of one chat completion sent as soon as ``/healthz`` answers (the HTTP API, as a
  client of the serverless deployment's emulator would).

Hermes Agent is installed from PyPI into a scratch venv outside the project (it is not a
dependency of Iris): without ``--hermes``, into ``$TMPDIR/iris-bench-hermes`` on first use.

    .venv/bin/python bench/hermes_cold_start.py [--hermes PATH/bin/hermes] [--runs 5]

Runs alternate (Iris, Hermes, Iris, ...) so both see the same load, after one unmeasured run
of each (a fresh install compiles its bytecode on first use).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import (
    connect_when_up,
    free_port,
    scripted_dev_env,
    serve_scripted_model,
    spawn,
    stop_child,
)

ROOT = Path(__file__).resolve().parents[1]
KEY = "bench-key"


def ensure_hermes() -> str:
    """The scratch venv's ``hermes``, the venv made and Hermes Agent installed when missing."""
    venv = Path(tempfile.gettempdir()) / "iris-bench-hermes"
    hermes = venv / "bin" / "hermes"
    if not hermes.exists():
        print(f"installing hermes-agent from PyPI into {venv} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "hermes-agent"], check=True)
    return str(hermes)


def hermes_once(hermes: str, model_port: int) -> tuple[float, float]:
    """Seconds from spawn to the answer on stdout, and to exit."""
    with tempfile.TemporaryDirectory() as home:
        Path(home, "config.yaml").write_text(
            "model:\n"
            "  default: scripted-model\n"
            "  provider: custom\n"
            f"  base_url: http://127.0.0.1:{model_port}/v1\n"
            "  api_key: sk-bench\n", encoding="utf-8")
        env = {**os.environ, "HERMES_HOME": home, "NO_COLOR": "1"}
        started = time.perf_counter()
        child = subprocess.Popen([hermes, "-z", "hello"], env=env,
                                 cwd=home, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, text=True)
        answered = None
        seen: list[str] = []
        assert child.stdout is not None
        for text in child.stdout:
            seen.append(text)
            if answered is None and text.strip() == "ok":
                answered = time.perf_counter() - started
        child.wait(timeout=300)
        ended = time.perf_counter() - started
        if answered is None:
            raise SystemExit("hermes gave no answer 'ok'; its output:\n" + "".join(seen)[-2000:])
        return answered, ended


def iris_once(model_port: int) -> float:
    """Seconds from spawning ``iris dev`` to the first chat completion's answer."""
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        env = scripted_dev_env(home, KEY, model_port)
        started = time.perf_counter()
        dev = spawn([sys.executable, "-m", "local_dev.cli", "dev", "--port", str(port),
                     "--tick", "3600"], env)
        url = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(timeout=300) as client:
                while True:
                    if dev.poll() is not None:
                        raise SystemExit(f"iris dev exited with {dev.returncode}")
                    try:
                        if client.get(f"{url}/healthz").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    time.sleep(0.01)
                response = client.post(
                    f"{url}/v1/chat/completions", headers={"Authorization": f"Bearer {KEY}"},
                    json={"model": "iris", "user": "first",
                          "messages": [{"role": "user", "content": "hello"}]})
                response.raise_for_status()
                if response.json()["choices"][0]["message"]["content"] != "ok":
                    raise SystemExit(f"iris answered {response.text[:200]}")
                return time.perf_counter() - started
        finally:
            stop_child(dev)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hermes", help="a hermes executable (default: a scratch venv's)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model_server:
        serve_scripted_model(args.model_server, lambda body: "ok")
        return
    if args.hermes and not Path(args.hermes).exists():
        parser.error(f"--hermes {args.hermes}: no such file")
    hermes = args.hermes or ensure_hermes()
    model_port = free_port()
    model = spawn([sys.executable, str(Path(__file__).resolve()), "--model-server",
                   str(model_port)], {**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        connect_when_up(model_port, time.perf_counter() + 60).close()
        # One unmeasured run each first: a fresh install compiles its bytecode on first use.
        iris_once(model_port)
        hermes_once(hermes, model_port)
        iris, hermes_answer, hermes_exit = [], [], []
        for _ in range(args.runs):
            iris.append(iris_once(model_port))
            answer, ended = hermes_once(hermes, model_port)
            hermes_answer.append(answer)
            hermes_exit.append(ended)
        print(f"{args.runs} alternating runs; load average {os.getloadavg()[0]:.1f}")
        print(f"Iris (iris dev, spawn -> first answer): p50 {statistics.median(iris):.2f} s, "
              f"min {min(iris):.2f}, max {max(iris):.2f}")
        print(f"Hermes (hermes -z, spawn -> answer): p50 "
              f"{statistics.median(hermes_answer):.2f} s, min {min(hermes_answer):.2f}, "
              f"max {max(hermes_answer):.2f}; -> exit p50 {statistics.median(hermes_exit):.2f} s")
        print(f"Iris / Hermes (to the answer): "
              f"{statistics.median(iris) / statistics.median(hermes_answer):.2f}")
    finally:
        model.terminate()
        model.wait(timeout=30)


if __name__ == "__main__":
    main()
