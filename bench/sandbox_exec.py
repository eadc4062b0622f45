"""Round-trip latency of LocalSandbox.exec, and of the ``terminal`` tool as a turn calls it
(dangerous-command check, the user's workspace, output formatting, untrusted wrapping).

Usage: .venv/bin/python bench/sandbox_exec.py [--runs 200] [--isolation none|bwrap]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from _common import summary

from sandboxes.local import LocalSandbox
from sandboxes.options import SandboxOptions


async def measure(run: Callable[[], Awaitable[None]], runs: int) -> list[float]:
    for _ in range(5):
        await run()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await run()
        samples.append(time.perf_counter() - started)
    return samples


async def sandbox_exec(home: Path, command: str, runs: int, isolation: str) -> list[float]:
    sandbox = LocalSandbox("bench", home=home,
                           options=SandboxOptions(local_isolation=isolation))  # type: ignore[arg-type]

    async def run() -> None:
        result = await sandbox.exec(command)
        assert result.exit_code == 0, result

    return await measure(run, runs)


async def terminal_tool(home: Path, command: str, runs: int, isolation: str) -> list[float]:
    os.environ["IRIS_HOME"] = str(home)
    os.environ["IRIS_SANDBOX_ISOLATION"] = isolation
    from core.config import load_settings
    from core.contracts.toolkit import ToolContext
    from core.messages import ToolCall
    from core.store import open_store
    from core.tools import default_toolset
    from core.turn.services import standalone_services

    settings = load_settings()
    store = open_store(settings)
    user = store.users.for_account("http:bench")
    session = store.sessions.start(user, "http:bench", "http")
    ctx = ToolContext(store=store, settings=settings,
                      services=standalone_services(settings, store),
                      user_id=user, session_id=session.id,
                      chat_key="http:bench", platform="http", account="http:bench")
    toolset = default_toolset()
    call = ToolCall(id="c1", name="terminal", arguments=json.dumps({"command": command}))

    async def run() -> None:
        result = await toolset.call(ctx, call)
        assert "exit code 0" in result.content, result.content

    try:
        return await measure(run, runs)
    finally:
        store.close()


async def main(runs: int, isolation: str) -> None:
    print(f"isolation: {isolation}")
    with tempfile.TemporaryDirectory() as home:
        for command in ("true", "echo hi"):
            samples = await sandbox_exec(Path(home), command, runs, isolation)
            print(f"LocalSandbox.exec({command!r}) x{runs}: {summary(samples)}")
        samples = await terminal_tool(Path(home) / "iris", "echo hi", runs, isolation)
        print(f"terminal tool ('echo hi') x{runs}: {summary(samples)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--isolation", choices=("none", "bwrap"), default="none")
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.isolation))
