"""WORK IN PROGRESS, not yet a benchmark (hence the leading underscore: run_all skips it): the
web-role step's streamed acks time out (httpx.ReadTimeout on the first message) and no figure
has been measured with it yet.

Peak memory per role: the web role (ack path only), the worker after turns, the tick, and
``iris dev`` after 20 plain + 20 tool turns (model -> read_file -> model) and a search.

Each role runs in a fresh process against a scripted OpenAI-compatible model server (through
litellm, as in production). Peak RSS is VmHWM from /proc: of the role's process, and summed over
its process tree (the indexing child included; a sum of per-process peaks, so an upper bound).

- web: ``uvicorn --factory _apps:ack_only_app`` (the web app with the worker handed off, as on
  Modal), 40 chat messages acknowledged (first SSE byte);
- worker: a process that composes the runtime and runs the 40 turns itself (what a worker
  container does), indexer child included;
- tick: a process that runs one scheduler tick on the same home;
- dev: ``iris dev`` serving the 40 turns over HTTP, then one search over the admin API.

Run: .venv/bin/python bench/_role_memory_wip.py [--turns 20] [--indexer process|inline]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, free_port, scripted_dev_env, spawn, wait_up

KEY, ADMIN = "bench-key", "bench-admin"
MIB = 1024.0


def status_kib(pid: int, field: str) -> int:
    try:
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith(field + ":"):
                return int(row.split()[1])
    except OSError:
        pass
    return 0


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(parents.get(current, []))
    return out


def peaks(pid: int) -> dict[str, float]:
    pids = tree(pid)
    return {
        "main_mib": status_kib(pid, "VmHWM") / MIB,
        "tree_mib": sum(status_kib(p, "VmHWM") for p in pids) / MIB,
        "processes": float(len(pids)),
    }


def script(llm: object) -> None:
    """Messages starting with "tool" get a read_file call, then a text answer."""

    def handle(request: dict) -> object:
        last = request["messages"][-1]
        if last.get("role") == "tool":
            return "The file says hello."
        if str(last.get("content", "")).startswith("tool"):
            return {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}
        return "Noted."

    llm.handler = handle  # type: ignore[attr-defined]


def texts(turns: int) -> list[str]:
    plain = [f"plain message {i} about gardening and the weather" for i in range(turns)]
    return plain + [f"tool turn {i}: what is in notes.txt?" for i in range(turns)]


def chat(url: str, text: str, *, stream: bool = False, user: str = "bench") -> None:
    import httpx

    body = {"messages": [{"role": "user", "content": text}], "user": user, "stream": stream}
    headers = {"Authorization": f"Bearer {KEY}"}
    if stream:
        with httpx.stream(
            "POST", f"{url}/v1/chat/completions", json=body, headers=headers, timeout=300
        ) as answer:
            answer.raise_for_status()
            next(answer.iter_bytes())
        return
    httpx.post(
        f"{url}/v1/chat/completions", json=body, headers=headers, timeout=300
    ).raise_for_status()


def server_role(
    factory: list[str], env: dict[str, str], turns: int, stream: bool, search: bool
) -> dict[str, float]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    child = spawn([*factory, "--port", str(port)], env)
    try:
        wait_up(url, child)
        for n, text in enumerate(texts(turns)):
            # acks only: nothing answers, so each message is another user's (a chat's next
            # message would wait for the one before)
            chat(url, text, stream=stream, user=f"bench{n}" if stream else "bench")
        if search:
            import httpx

            found = httpx.get(
                f"{url}/api/users/api:bench/sessions/search",
                params={"q": "gardening weather"},
                headers={"Authorization": f"Bearer {ADMIN}"},
                timeout=300,
            )
            found.raise_for_status()
        return peaks(child.pid)
    finally:
        child.terminate()  # measured: an unanswered stream may hold a graceful exit, so kill
        try:
            child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=15)


def worker_main(turns: int) -> None:
    """In a fresh process: run the turns here, as a worker container does, then report."""
    from pydantic import SecretStr

    from core.config import load_settings
    from core.messages import InboundMessage
    from functions.dispatch import LocalDispatcher
    from functions.ingress import receive
    from functions.runtime import compose

    settings = load_settings().model_copy(update={"api_key": SecretStr(KEY)})
    rt = compose(settings, dispatcher=LocalDispatcher())

    async def run() -> None:
        for n, text in enumerate(texts(turns)):
            await receive(
                rt,
                InboundMessage(
                    platform="http",
                    chat_id="bench",
                    account="http:bench",
                    platform_message_id=str(n),
                    text=text,
                ),
            )
            await rt.dispatcher.idle()

    asyncio.run(run())
    user = rt.store.users.for_account("http:bench")
    deadline = time.monotonic() + 300
    while rt.store.vectors.count_missing(user, "all-minilm-l6-v2") and time.monotonic() < deadline:
        time.sleep(0.1)  # the indexing child's peak belongs to the worker's tree
    print(json.dumps(peaks(os.getpid())))


def tick_main() -> None:
    from core.config import load_settings
    from functions.runtime import compose
    from functions.tick import run_tick

    rt = compose(load_settings())
    asyncio.run(run_tick(rt))
    print(json.dumps(peaks(os.getpid())))


def in_child(mode: str, env: dict[str, str], turns: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--as", mode, "--turns", str(turns)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--indexer", choices=("process", "inline"), default="process")
    parser.add_argument("--as", dest="role", choices=("worker", "tick"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "worker":
        return worker_main(args.turns)
    if args.role == "tick":
        return tick_main()

    from iris_testing.llm_server import ScriptedLLM
    from iris_testing.server import start_server

    llm = ScriptedLLM()
    script(llm)
    server = start_server(llm.app)
    python = sys.executable
    rows: list[tuple[str, dict[str, float]]] = []
    try:

        def env_for() -> dict[str, str]:
            home = tempfile.mkdtemp(prefix="iris-mem-")
            env = scripted_dev_env(
                home,
                KEY,
                int(server.url.rsplit(":", 1)[1]),
                IRIS_ADMIN_API_KEY=ADMIN,
                IRIS_SANDBOX_ISOLATION="none",
                IRIS_SEARCH_INDEXER=args.indexer,
            )
            env["PYTHONPATH"] = f"{ROOT}:{ROOT / 'bench'}"
            return env

        web = [python, "-m", "uvicorn", "--factory", "_apps:ack_only_app", "--log-level", "warning"]
        rows.append(("web (ack path only)", server_role(web, env_for(), args.turns, True, False)))
        shared = env_for()
        rows.append(("worker (after the turns)", in_child("worker", shared, args.turns)))
        rows.append(("tick", in_child("tick", shared, args.turns)))
        dev = [python, "-c", "from local_dev.cli import cli; cli()", "dev", "--tick", "3600"]
        rows.append(
            ("iris dev (turns + search)", server_role(dev, env_for(), args.turns, False, True))
        )
    finally:
        server.stop()
    print(
        f"peak RSS per role ({args.turns} plain + {args.turns} tool turns; "
        f"search_indexer={args.indexer}):"
    )
    for name, seen in rows:
        print(
            f"  {name:<28} main {seen['main_mib']:6.0f} MiB   process tree "
            f"{seen['tree_mib']:6.0f} MiB ({seen['processes']:.0f} processes)"
        )
    return None


if __name__ == "__main__":
    main()
