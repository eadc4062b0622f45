"""A worker process for the concurrency test: add facts to one user's memory through the
memory tool, and print how many attempts the writes took.

The two workers meet through files in ``sync_dir`` (no clock): both start once both are ready,
and the first write of worker ``one`` is made to collide for certain — it pauses between reading
the store and committing until worker ``two`` has committed its first fact — so the test always
exercises the compare-and-set; the other writes race freely."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import core.security
from core.config import load_settings
from core.contracts.toolkit import ToolContext
from core.security import Finding
from core.store import open_store
from core.tools.memory import Memory, MemoryArgs
from core.turn.services import standalone_services
from iris_testing.waiting import wait_until

WAIT_SECONDS = 120.0


def wait_for(path: Path) -> None:
    wait_until(path.exists, f"the other worker's {path.name}", timeout=WAIT_SECONDS)


def main(user_id: str, name: str, count: int, sync_dir: Path) -> None:
    scans = 0
    real_scan = core.security.scan_text

    def slow_scan(text: str, *, docs: bool = False) -> list[Finding]:
        nonlocal scans
        scans += 1
        if name == "one" and scans == 1:  # read, then let the other worker commit first
            (sync_dir / "one-read").touch()
            wait_for(sync_dir / "two-added")
        return real_scan(text, docs=docs)

    core.security.scan_text = slow_scan
    settings = load_settings()
    store = open_store(settings)
    ctx = ToolContext(store=store, settings=settings,
                      services=standalone_services(settings, store),
                      user_id=user_id, session_id=f"ses_{name}",
                      chat_key=f"http:{name}", platform="http", account=f"http:{name}")
    tool = Memory()
    (sync_dir / f"ready-{name}").touch()
    wait_for(sync_dir / "ready-one")
    wait_for(sync_dir / "ready-two")
    for i in range(count):
        if name == "two" and i == 0:
            wait_for(sync_dir / "one-read")
        args = MemoryArgs(action="add", content=f"{name} fact number {i}")
        reply = asyncio.run(tool.run(ctx, args))
        assert reply.startswith("Added to memory."), reply
        if name == "two" and i == 0:
            (sync_dir / "two-added").touch()
    print(f"{scans}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
