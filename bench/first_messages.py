"""Twenty first messages a new user types, sent to the embedded demo model through the client
`iris chat` uses, against a real `iris dev` (which starts the model server) in a fresh IRIS_HOME.
Counts the answers in natural language (not tool-call syntax, not a step-limit notice, no HTML
escapes such as &#39;, not empty), times each answer, and counts answers cut at the length cap.

Run: .venv/bin/python bench/first_messages.py      (needs `make run`'s local model installed)
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from local_dev.chat import ChatClient, ChatError  # noqa: E402
from local_dev.devkey import dev_api_key  # noqa: E402

MESSAGES = [
    "hello",
    "what can you do?",
    "what time is it in Tokyo?",
    "Remember that I prefer metric units",
    "what's 17 times 23?",
    "tell me a joke",
    "who are you?",
    "how do I make a cup of tea?",
    'translate "good morning" into French',
    "give me three ideas for dinner",
    "what is the capital of Australia?",
    "write a haiku about autumn",
    "how are you today?",
    "explain what a CPU does in one sentence",
    "what did I ask you to remember?",
    "suggest a name for a cat",
    "what's the weather like?",
    "summarise our conversation so far",
    "can you help me plan my week?",
    "thanks, bye",
]

TOOL_SYNTAX = re.compile(r"functions\.\w+|<tool_call>|\"arguments\"\s*:|^\s*\{\s*\"name\"\s*:",
                         re.MULTILINE)
STEP_LIMIT = re.compile(r"I stopped after \d+ steps", re.IGNORECASE)
HTML_ESCAPE = re.compile(r"&(?:#\d+|#x[0-9a-f]+|quot|amp|lt|gt|apos);", re.IGNORECASE)
CUT_SHORT = "(The answer was cut short"


def verdict(answer: str) -> str:
    if not answer.strip():
        return "empty"
    if TOOL_SYNTAX.search(answer):
        return "tool syntax"
    if STEP_LIMIT.search(answer):
        return "step limit"
    if HTML_ESCAPE.search(answer):
        return "html escape"
    return "words"


def _port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> int:
    from local_dev import engines

    if engines.available() is None:
        print("skipped: the embedded demo model is not installed (run `make run` once)")
        return 0
    home = Path(tempfile.mkdtemp(prefix="iris-first-messages-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRIS_")}
    env["IRIS_HOME"] = str(home)
    port = _port()
    url = f"http://127.0.0.1:{port}"
    print("load average (1, 5, 15 min) at the start: "
          + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    started = time.perf_counter()
    dev = subprocess.Popen([sys.executable, "-m", "local_dev.cli", "dev", "--port", str(port)],
                           cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if dev.poll() is not None or time.perf_counter() - started > 300:
                print(f"iris dev did not start; see {home}/logs", file=sys.stderr)
                return 1
            time.sleep(0.2)
        print(f"iris dev with the demo model answering after {time.perf_counter() - started:.1f} s")
        client = ChatClient(url=url, api_key=dev_api_key(home), user="newcomer")
        seconds, kinds, answers = [], [], []
        for text in MESSAGES:
            t0 = time.perf_counter()
            try:
                answer = client.send(text)
            except ChatError as exc:
                answer = f"(error: {exc})"
            took = time.perf_counter() - t0
            kind = verdict(answer) if not answer.startswith("(error") else "error"
            seconds.append(took)
            kinds.append(kind)
            answers.append(answer)
            shown = " ".join(answer.split())[:90]
            print(f"{took:6.1f} s  {kind:11}  {text!r:45} → {shown}", flush=True)
        words = kinds.count("words")
        cut = sum(CUT_SHORT in answer for answer in answers)
        print(f"\nnatural-language answers: {words} of {len(MESSAGES)}; median "
              f"{statistics.median(seconds):.1f} s, max {max(seconds):.1f} s; "
              f"{cut} cut short at the length cap")
        print("load average (1, 5, 15 min) at the end: "
              + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    finally:
        dev.terminate()
        dev.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
