"""A worker process for the concurrency test: add facts to one user's memory through the
memory tool, starting at an agreed moment, and print how many attempts the writes took."""

from __future__ import annotations

import asyncio
import sys
import time

import core.security
from core.config import load_settings
from core.services import Services
from core.store import open_store
from core.toolkit import ToolContext
from core.tools.memory import Memory, MemoryArgs


def main(user_id: str, name: str, count: int, start_at: float) -> None:
    scans = 0
    real_scan = core.security.scan_text

    def slow_scan(text: str) -> list:
        nonlocal scans
        scans += 1
        time.sleep(0.002)  # widen the window between reading the store and committing
        return real_scan(text)

    core.security.scan_text = slow_scan
    settings = load_settings()
    store = open_store(settings)
    ctx = ToolContext(store=store, settings=settings,
                      services=Services.standalone(settings, store),
                      user_id=user_id, session_id=f"ses_{name}",
                      chat_key=f"http:{name}", platform="http", account=f"http:{name}")
    tool = Memory()
    time.sleep(max(0.0, start_at - time.time()))
    for i in range(count):
        args = MemoryArgs(action="add", content=f"{name} fact number {i}")
        reply = asyncio.run(tool.run(ctx, args))
        assert reply.startswith("Added to memory."), reply
    print(f"{scans}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
