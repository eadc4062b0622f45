"""Peak memory of each role of Iris on one scripted workload (issue 30).

Each role runs in a fresh process on a fresh ``IRIS_HOME`` (a local libSQL file). This bench
samples, every 20 ms from /proc, the resident memory of that process and of all its children
(the indexing child included) summed, and prints the peak (resident sets summed, and
proportional sets summed: shared pages counted once), the figure at each step, and the largest
process of the tree at its peak. The model is a scripted OpenAI-compatible server in a
process of its own (not counted), reached through litellm; it answers at once.

The workload: ``--plain`` plain turns, ``--tools`` tool turns (the model reads a file, then
answers) and one search (the model calls ``session_search``), all from one user, then a wait
until every message has its vector (the indexing child's work counts).

- web: the web container's shape (``_apps.ack_only_app`` under uvicorn; the worker is handed
  off, ``modal`` imported as its first spawn does): the same messages as Telegram webhooks,
  acknowledged; no turn runs here.
- worker: turns run in the process as the Modal ``Worker`` runs them (``receive``, the local
  dispatcher, after-turn work). ``--indexer function`` (its default) is the cloud's shape: the
  worker's ``ModalIndexer`` hands batches to the ``Indexer`` function, here a process of its
  own (the function's body, ``infra.cloud.index_sessions``) measured as a role of its own;
  ``process``/``inline`` are ``iris dev``'s shapes.
- dev: ``iris dev``, the same turns through its HTTP API.

Targets: web <= 150 MiB, worker <= 400 MiB, iris dev <= 500 MiB.
Run: .venv/bin/python bench/memory_roles.py [--plain 20] [--tools 20] [--only web|worker|dev]
     [--indexer function|process|inline] [--model-client auto|litellm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from _common import (
    ROOT,
    connect_when_up,
    free_port,
    scripted_dev_env,
    serve_scripted_model,
    spawn,
    wait_up,
)

from iris_testing import procs

KEY = "bench-key"
MIB = 1024 * 1024
TELEGRAM_SECRET = "bench-telegram-secret"
SAMPLE_SECONDS = 0.02
SEARCH = "search: what did I say about marine biology?"
MODEL_CLIENT = "auto"  # --model-client litellm: the model through litellm, as a named provider


def answer(body: dict[str, Any]) -> dict[str, Any] | str:
    """The scripted model: a tool turn reads a file, a search turn searches, then it answers."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return "Done."
    text = last["content"] if isinstance(last["content"], str) else json.dumps(last["content"])
    if "read notes" in text:
        return {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}
    if "search:" in text:
        return {
            "tool_calls": [{"name": "session_search", "arguments": {"query": "marine biology"}}]
        }
    return f"Noted ({len(body['messages'])} messages so far)."


def workload(plain: int, tools: int) -> list[tuple[str, list[str]]]:
    """The steps, each a name and its messages."""
    return [
        ("plain turns", [f"I studied marine biology, fact {n}" for n in range(plain)]),
        ("tool turns", [f"please read notes, part {n}" for n in range(tools)]),
        ("search", [SEARCH]),
    ]


class Sampler:
    """Peaks of a process tree's memory, sampled on a thread: the resident sets summed (pages
    shared between the processes, such as the memory-mapped model file, count once per
    process) and the proportional sets summed (shared pages counted once in all)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0  # summed RSS
        self.peak_pss = 0
        self.largest: tuple[int, str] = (0, "")  # at the peak: the largest process and its cmd
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def now(self) -> int:
        return procs.tree_rss_bytes(self.pid)

    def _run(self) -> None:
        while not self._stop.is_set():
            tree = [self.pid, *procs.descendants(self.pid)]
            sizes = {pid: procs.rss_bytes(pid) for pid in tree}
            total = sum(sizes.values())
            self.peak_pss = max(self.peak_pss, sum(procs.pss_bytes(pid) for pid in tree))
            if total > self.peak:
                self.peak = total
                big = max(sizes, key=lambda pid: sizes[pid])
                self.largest = (sizes[big], procs.cmdline(big)[:60])
            time.sleep(SAMPLE_SECONDS)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def vectors_done(home: str, account: str) -> Callable[[], bool]:
    os.environ["IRIS_HOME"] = home
    from core.config import load_settings
    from core.search import embed
    from core.store import open_store

    store = open_store(load_settings())

    def done() -> bool:
        user = store.users.for_account(account)
        return store.vectors.count_missing(user, embed.FULL) == 0

    return done


def wait(condition: Callable[[], bool], what: str, seconds: float = 600) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting for {what}")
        time.sleep(0.2)


def report(role: str, sampler: Sampler, steps: list[tuple[str, int]],
           target: int | None) -> None:
    goal = f"target <= {target} MiB" if target else "no target"
    print(
        f"{role}: peak RSS {sampler.peak / MIB:.0f} MiB, PSS {sampler.peak_pss / MIB:.0f} "
        f"MiB ({goal})\n  RSS "
        + ", ".join(f"{name} {rss / MIB:.0f}" for name, rss in steps)
        + f" MiB\n  largest process at the peak {sampler.largest[0] / MIB:.0f} MiB "
        f"({sampler.largest[1].strip()})"
    )


def run_web(plain: int, tools: int) -> None:
    from iris_testing.telegram_api import FakeTelegram

    home = tempfile.mkdtemp(prefix="iris-bench-mem-web-")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRIS_")}
    env.update(
        IRIS_HOME=home,
        IRIS_API_KEY=KEY,
        IRIS_TELEGRAM_TOKEN="7000001:bench",
        IRIS_TELEGRAM_SECRET=TELEGRAM_SECRET,
        IRIS_TELEGRAM_API_BASE="http://127.0.0.1:9",
        IRIS_TELEGRAM_ACCESS="open",
        PYTHONPATH=f"{ROOT}:{ROOT / 'bench'}",
    )
    web = spawn(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "memory_roles:web_app",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env,
    )
    url = f"http://127.0.0.1:{port}"
    telegram = FakeTelegram()
    try:
        wait_up(url, web)
        sampler = Sampler(web.pid)
        steps = [("start", sampler.now())]
        with httpx.Client(timeout=60) as client:
            for name, texts in workload(plain, tools):
                for text in texts:
                    update = telegram.make_update(text, user_id=4242)
                    response = client.post(
                        f"{url}/telegram/webhook",
                        json=update,
                        headers={"x-telegram-bot-api-secret-token": TELEGRAM_SECRET},
                    )
                    response.raise_for_status()
                steps.append((f"after {name}", sampler.now()))
        sampler.stop()
        report("web (ack only)", sampler, steps, 150)
    finally:
        web.terminate()
        web.wait(timeout=30)


def web_app():
    """The web container's app: modal is imported by its first spawn of the worker."""
    import contextlib

    from _apps import ack_only_app

    with contextlib.suppress(ImportError):
        import modal  # noqa: F401

    return ack_only_app()


def worker_process(home: str, plain: int, tools: int) -> None:
    """Runs in the measured process: turns as the Modal Worker runs them; prints a line after
    each step and waits for a line on stdin before going on."""
    from core.config import load_settings
    from core.messages import InboundMessage
    from core.search import embed
    from functions.dispatch import LocalDispatcher
    from functions.ingress import receive
    from functions.runtime import compose

    dispatcher = LocalDispatcher()
    rt = compose(load_settings(), dispatcher=dispatcher)
    handover = os.environ.get("BENCH_INDEX_REQUESTS")
    if handover:  # the cloud's shape: spawned Indexer calls become lines for that process
        from functions.indexer_modal import ModalIndexer
        from iris_testing.modal_fake import FakeModal

        def spawn_index(pairs: list[list[str]]) -> None:
            with open(handover, "a", encoding="utf-8") as out:
                out.write(json.dumps(pairs) + "\n")

        indexer = rt.indexer
        if not isinstance(indexer, ModalIndexer):
            raise SystemExit("BENCH_INDEX_REQUESTS needs IRIS_DISPATCHER=modal and "
                             f"IRIS_SEARCH_INDEXER=process; the indexer is {indexer!r}")
        indexer.sdk = FakeModal(on_spawn=spawn_index)
    count = 0

    async def turn(text: str) -> str:
        nonlocal count
        count += 1
        received = await receive(
            rt,
            InboundMessage(
                platform="http",
                chat_id="bench",
                account="http:bench",
                platform_message_id=str(count),
                text=text,
            ),
        )
        await dispatcher.idle()
        entry = rt.store.inbox.get(received.user_id, received.entry_id)
        if entry.status != "done":
            raise SystemExit(f"turn {count}: {entry.status} {entry.error}")
        return entry.user_id

    async def run() -> None:
        print("ready", flush=True)
        user = ""
        for name, texts in workload(plain, tools):
            for text in texts:
                user = await turn(text)
            print(name, flush=True)
        wait(lambda: rt.store.vectors.count_missing(user, embed.FULL) == 0, "the vectors")
        print("indexed", flush=True)

    asyncio.run(run())
    sys.stdin.readline()
    rt.close()


def index_function(home: str, requests: str) -> None:
    """Runs in the measured ``Indexer`` process: each line the worker hands over is one spawned
    call, run with the function's body, until a line ``stop``."""
    from core.config import load_settings
    from infra.cloud import index_sessions

    settings = load_settings()
    print("ready", flush=True)
    done = 0
    while True:
        with open(requests, encoding="utf-8") as source:
            lines = source.read().splitlines()
        for line in lines[done:]:
            if line == "stop":
                return
            index_sessions(json.loads(line), settings)
        done = len(lines)
        time.sleep(0.05)


def run_worker(plain: int, tools: int, model_port: int, indexer: str) -> None:
    home = tempfile.mkdtemp(prefix="iris-bench-mem-worker-")
    extra = {"IRIS_SEARCH_INDEXER": indexer}
    function = None
    if indexer == "function":
        requests = str(Path(home) / "index-requests.jsonl")
        Path(requests).touch()
        extra = {"IRIS_SEARCH_INDEXER": "process", "IRIS_DISPATCHER": "modal",
                 "BENCH_INDEX_REQUESTS": requests}
        function = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--index-function", home, requests],
            cwd=ROOT, env=scripted_dev_env(home, KEY, model_port), stdout=subprocess.PIPE,
            text=True)
        assert function.stdout is not None
        if function.stdout.readline().strip() != "ready":
            raise SystemExit("the Indexer function's process did not start")
    env = scripted_dev_env(home, KEY, model_port, IRIS_MODEL_CLIENT=MODEL_CLIENT, **extra)
    worker = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--worker", home, str(plain), str(tools)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None and worker.stdin is not None
        if worker.stdout.readline().strip() != "ready":
            raise SystemExit("the worker did not start")
        sampler = Sampler(worker.pid)
        other = Sampler(function.pid) if function is not None else None
        steps = [("start", sampler.now())]
        other_steps = [("start", other.now())] if other is not None else []
        for line in worker.stdout:
            steps.append((f"after {line.strip()}", sampler.now()))
            if other is not None:
                other_steps.append((f"after {line.strip()}", other.now()))
            if line.strip() == "indexed":
                break
        sampler.stop()
        worker.stdin.write("\n")
        worker.stdin.flush()
        report(f"worker (turns; search_indexer={indexer})", sampler, steps, 400)
        if other is not None:
            other.stop()
            report("Indexer function (its own container)", other, other_steps, None)
    finally:
        worker.wait(timeout=60)
        if function is not None:
            with open(requests, "a", encoding="utf-8") as out:
                out.write("stop\n")
            function.wait(timeout=60)


def run_dev(plain: int, tools: int, model_port: int, indexer: str) -> None:
    home = tempfile.mkdtemp(prefix="iris-bench-mem-dev-")
    port = free_port()
    env = scripted_dev_env(home, KEY, model_port, IRIS_SEARCH_INDEXER=indexer,
                           IRIS_MODEL_CLIENT=MODEL_CLIENT)
    dev = spawn(
        [sys.executable, "-m", "local_dev.cli", "dev", "--port", str(port), "--tick", "3600"], env
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(url, dev, seconds=300)
        sampler = Sampler(dev.pid)
        steps = [("start", sampler.now())]
        with httpx.Client(timeout=300) as client:
            for name, texts in workload(plain, tools):
                for text in texts:
                    response = client.post(
                        f"{url}/v1/chat/completions",
                        headers={"Authorization": f"Bearer {KEY}"},
                        json={
                            "model": "iris",
                            "user": "bench",
                            "messages": [{"role": "user", "content": text}],
                        },
                    )
                    response.raise_for_status()
                steps.append((f"after {name}", sampler.now()))
        wait(vectors_done(home, "http:bench"), "the vectors")
        steps.append(("after indexing", sampler.now()))
        sampler.stop()
        report("iris dev (everything)", sampler, steps, 500)
    finally:
        dev.terminate()
        dev.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plain", type=int, default=20)
    parser.add_argument("--tools", type=int, default=20)
    parser.add_argument("--only", choices=["web", "worker", "dev"])
    parser.add_argument(
        "--indexer",
        choices=["function", "process", "inline"],
        help="where vectors are computed: the worker's default is function (the cloud's "
        "Indexer), iris dev's process (its child); inline in the turn's process",
    )
    parser.add_argument("--model-client", choices=["auto", "litellm"], default="auto",
                        help="IRIS_MODEL_CLIENT of the worker and iris dev")
    parser.add_argument("--index-function", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--model-server", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model_server:
        serve_scripted_model(args.model_server, answer)
        return
    if args.index_function:
        index_function(*args.index_function)
        return
    global MODEL_CLIENT
    MODEL_CLIENT = args.model_client
    if args.worker:
        home, plain, tools = args.worker
        worker_process(home, int(plain), int(tools))
        return
    model_port = free_port()
    model = spawn(
        [sys.executable, str(Path(__file__).resolve()), "--model-server", str(model_port)],
        {**os.environ, "PYTHONPATH": str(ROOT)},
    )
    connect_when_up(model_port, time.perf_counter() + 120).close()
    print(
        f"peak RSS per role (process + children, sampled every {SAMPLE_SECONDS * 1000:.0f} "
        f"ms): {args.plain} plain + {args.tools} tool turns + a search, "
        f"indexer {args.indexer or 'function (worker), process (iris dev)'}; "
        f"model client {MODEL_CLIENT}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    try:
        if args.only in (None, "web"):
            run_web(args.plain, args.tools)
        if args.only in (None, "worker"):
            run_worker(args.plain, args.tools, model_port, args.indexer or "function")
        if args.only in (None, "dev"):
            if args.indexer == "function":
                parser.error("--indexer function is the worker's (iris dev has no Modal)")
            run_dev(args.plain, args.tools, model_port, args.indexer or "process")
    finally:
        model.terminate()
        model.wait(timeout=30)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
