"""What streaming an answer across containers costs on Modal: Queue calls and delay.

The web runtime (uvicorn on loopback, the real HTTP API) spawns its worker through the Modal
fake; the worker runtime drains in its own thread and relays the answer's deltas through the
fake's Queue (bound to the real SDK's signatures). The scripted model sends a ``--words`` word
answer, one word every ``--pace`` ms (its gate released by a timer thread, like a model writing
at that speed). Prints the Queue writes and reads of the answer, and, per word, the time from its
release by the model to its arrival at the SSE client (median and 95th percentile).

Run: .venv/bin/python bench/stream_relay.py [--words 300] [--pace 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import threading
import time

import _common  # noqa: F401  (puts the project on sys.path)
import httpx

KEY = "bench-key"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--pace", type=float, default=20.0, help="ms between the model's words")
    args = parser.parse_args()
    os.environ["IRIS_HOME"] = tempfile.mkdtemp(prefix="iris-bench-")

    from core.config import load_settings
    from core.contracts.dispatch import ChatRef
    from functions.app import create_app
    from functions.dispatch_modal import ModalDispatcher
    from functions.runtime import Runtime, compose
    from functions.worker import drain
    from iris_testing.llm_server import Gate, ScriptedLLM
    from iris_testing.modal_fake import FakeModal
    from iris_testing.server import serve

    answer = " ".join(f"w{i}" for i in range(args.words))
    llm, gate = ScriptedLLM(), Gate()
    llm.reply(answer, gate=gate)
    llm.reply("Title")  # the after-turn session title
    released: dict[int, float] = {}
    holder: dict[str, Runtime] = {}
    drains: list[threading.Thread] = []

    def spawned(user_id: str, chat_key: str) -> None:
        run = threading.Thread(target=asyncio.run,
                               args=(drain(holder["worker"], ChatRef(user_id, chat_key)),))
        drains.append(run)
        run.start()

    def model_writes() -> None:
        gate.allow(1)  # the role chunk
        gate.wait_sent(1, timeout=120)  # the worker has started the model call
        for word in range(args.words):
            time.sleep(args.pace / 1000)
            released[word] = time.perf_counter()
            gate.allow(1)
        gate.open()

    sdk = FakeModal(on_spawn=spawned)
    with serve(llm.app) as model:
        os.environ.update({
            "IRIS_MODEL": "openai/scripted-model", "IRIS_MODEL_API_BASE": f"{model.url}/v1",
            "IRIS_MODEL_API_KEY": "sk-scripted", "IRIS_API_KEY": KEY,
            "IRIS_MODEL_RETRIES": "0", "IRIS_DISPATCHER": "modal",
        })
        settings = load_settings()
        web = compose(settings, dispatcher=ModalDispatcher(settings.modal_app, sdk=sdk))
        holder["worker"] = compose(settings, store=web.store,
                                   dispatcher=ModalDispatcher(settings.modal_app, sdk=sdk))
        arrived: list[tuple[int, float]] = []
        text = ""
        with serve(create_app(web)) as iris, httpx.Client(base_url=iris.url, timeout=120) as c:
            writer = threading.Thread(target=model_writes)
            writer.start()
            body = {"model": "iris", "messages": [{"role": "user", "content": "go"}],
                    "stream": True}
            with c.stream("POST", "/v1/chat/completions", json=body,
                          headers={"Authorization": f"Bearer {KEY}"}) as response:
                for line in response.iter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    delta = json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
                    before = len(text.split())
                    text += delta
                    now = time.perf_counter()
                    arrived += [(w, now) for w in range(before, len(text.split()))]
            writer.join()
        for run in drains:
            run.join(60)
    assert text == answer, "the streamed answer differs from the model's"
    lags = [(at - released[w]) * 1000 for w, at in arrived if w in released]
    puts = sum(1 for call in sdk.calls if call.name == "Queue.put.aio")
    reads = sum(1 for call in sdk.calls if call.name == "Queue.get_many.aio")
    print(f"{args.words} words, one per {args.pace:g} ms: {puts} Queue writes, {reads} reads")
    print(f"word released → at the SSE client: median {statistics.median(lags):.0f} ms, "
          f"p95 {statistics.quantiles(lags, n=20)[18]:.0f} ms")


if __name__ == "__main__":
    main()
