"""What a tool call costs through execute_code's channel, against the same call made directly.

Usage: .venv/bin/python bench/execute_code.py [--runs 5] [--calls 50]

For each backend (local unisolated, local in bubblewrap where installed, and the Modal and
Daytona SDK fakes, which run on this machine: they show the channel's own cost, not a cloud's
round trips), it runs the execute_code tool as a turn does (through ``Toolset.dispatch``) with
a script making no tool call and one making ``--calls`` read_file calls, and reports the
script's fixed cost, the cost per call through the channel, and a direct read_file call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from _common import summary

EMPTY = 'print("ok")\n'
CALLS = ('from iris_tools import read_file\nfor _ in range({n}):\n'
         '    read_file("data.txt")\nprint("ok")\n')


def context(home: Path, backend: str, isolation: str, fakes: Path):
    from core.acting.workspaces import Workspaces, sandbox_options
    from core.config import load_settings
    from core.contracts.toolkit import ToolContext
    from core.store import open_store
    from core.tools import default_toolset
    from core.turn.services import standalone_services

    os.environ.update({"IRIS_HOME": str(home), "IRIS_SANDBOX_ISOLATION": isolation})
    settings = load_settings()
    store = open_store(settings)
    user = store.users.for_account("http:bench")
    session = store.sessions.start(user, "http:bench", "http")
    services = standalone_services(settings, store)
    if backend in ("modal", "daytona"):
        from iris_testing.sandboxes.fake_daytona import FakeDaytona
        from iris_testing.sandboxes.fake_modal import FakeModal
        from sandboxes.daytona_backend import DaytonaSandbox
        from sandboxes.modal_backend import ModalSandbox

        settings = settings.model_copy(update={"sandbox_backend": backend})
        spaces = Workspaces(settings, store)
        options = sandbox_options(settings)
        if backend == "modal":
            modal = FakeModal(fakes / "modal")
            spaces._opener = lambda u: ModalSandbox(u, state=spaces.state, options=options,
                                                    sdk=modal)
        else:
            daytona = FakeDaytona(fakes / "daytona")
            spaces._opener = lambda u: DaytonaSandbox(u, state=spaces.state, options=options,
                                                      sdk=daytona)
        services = replace(services, workspaces=spaces)
    ctx = ToolContext(store=store, settings=settings, services=services, user_id=user,
                      session_id=session.id, chat_key="http:bench", platform="http",
                      account="http:bench")
    ctx.toolset = default_toolset()
    return ctx


async def timed(ctx, name: str, args: dict[str, object], runs: int) -> list[float]:
    from core.messages import ToolCall

    call = ToolCall(id="bench", name=name, arguments=json.dumps(args))
    samples = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        outcome = await ctx.toolset.dispatch(ctx, call)
        samples.append(time.perf_counter() - started)
        if not outcome.ok or "Error" in outcome.output.split("\n")[0]:
            raise SystemExit(f"{name} failed: {outcome.output[:500]}")
    return samples[1:]  # the first run opens the sandbox


async def measure(ctx, runs: int, calls: int) -> None:
    from core.messages import ToolCall

    await ctx.toolset.dispatch(ctx, ToolCall(
        id="w", name="write_file", arguments=json.dumps({"path": "data.txt", "content": "x\n"})))
    empty = await timed(ctx, "execute_code", {"code": EMPTY}, runs)
    busy = await timed(ctx, "execute_code", {"code": CALLS.format(n=calls)}, runs)
    direct = await timed(ctx, "read_file", {"path": "data.txt"}, runs * 10)
    per_call = [(b - e) / calls for b, e in zip(sorted(busy), sorted(empty), strict=True)]
    print(f"  script, no tool call:       {summary(empty)}")
    print(f"  script, {calls} read_file calls: {summary(busy)}")
    print(f"  per call through the channel: {summary(per_call)}")
    print(f"  direct read_file call:        {summary(direct)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    cases = [("local", "none")]
    if shutil.which("bwrap"):
        cases.append(("local", "bwrap"))
    cases += [("modal", "none"), ("daytona", "none")]
    for backend, isolation in cases:
        root = Path(tempfile.mkdtemp(prefix="iris-bench-exec-"))
        label = f"{backend} ({isolation})" if backend == "local" else f"{backend} (SDK fake)"
        print(f"{label}:")
        ctx = context(root / "home", backend, isolation, root / "fakes")
        try:
            asyncio.run(measure(ctx, args.runs, args.calls))
        finally:
            ctx.store.close()
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
