"""Helpers for the acting tests: a tool context for a user, calling a tool the way a turn
does (through a ``Toolset``, so argument checks, error handling and untrusted wrapping apply),
workspaces on the Modal or Daytona fakes, and sending /stop while a command runs."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Awaitable
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.acting.workspaces import Workspaces, sandbox_options
from core.contracts.services import Services
from core.contracts.toolkit import Tool, ToolContext, Toolset
from core.messages import InboundMessage, ToolCall
from core.tools import default_toolset
from core.turn.services import standalone_services
from iris_testing.waiting import until, wait_until
from sandboxes.daytona_backend import DaytonaSandbox
from sandboxes.modal_backend import ModalSandbox
from tests.sandboxes.conftest import alive
from tests.sandboxes.fakes import FakeDaytona, FakeModal

_ids = itertools.count(1)


def make_ctx(store, settings, account: str = "http:alice", *, platform: str = "http",
             services: Services | None = None) -> ToolContext:
    user_id = store.users.for_account(account)
    chat_key = f"{platform}:{account.split(':', 1)[1]}"
    session = store.sessions.start(user_id, chat_key, platform)
    return ToolContext(
        store=store, settings=settings,
        services=services or standalone_services(settings, store), user_id=user_id,
        session_id=session.id, chat_key=chat_key, platform=platform, account=account,
    )


async def acall(ctx: ToolContext, name: str, toolset: Toolset | None = None, **args: Any) -> str:
    toolset = toolset or default_toolset()
    call = ToolCall(id=f"call_{next(_ids)}", name=name, arguments=json.dumps(args))
    return (await toolset.call(ctx, call)).content


def call(ctx: ToolContext, name: str, **args: Any) -> str:
    return asyncio.run(acall(ctx, name, **args))


def only(tool: Tool) -> Toolset:
    return Toolset([tool])


def with_backend(ctx: ToolContext, backend: str, tmp_path: Path) -> Any:
    """``ctx`` with its workspaces on a faked Modal or Daytona SDK; returns the fake."""
    settings = ctx.settings.model_copy(update={"sandbox_backend": backend})
    spaces = Workspaces(settings, ctx.store)
    fake: Any
    if backend == "modal":
        fake = FakeModal(tmp_path / "modal")
        spaces._opener = lambda user: ModalSandbox(
            user, state=spaces.state, options=sandbox_options(settings), sdk=fake)
    else:
        fake = FakeDaytona(tmp_path / "daytona")
        spaces._opener = lambda user: DaytonaSandbox(
            user, state=spaces.state, options=sandbox_options(settings), sdk=fake)
    ctx.settings = settings
    ctx.services = replace(ctx.services, workspaces=spaces)
    return fake


async def until_found(root: Path, name: str) -> Path:
    found = await until(lambda: [p for p in root.rglob(name) if p.is_file()],
                        f"a file {name} under {root}")
    return found[0]


def until_cancelled(store: Any, user_id: str, entry_id: int, since: float, what: str,
                    timeout: float = 60.0) -> Any:
    """The inbox entry once a /stop has cancelled it, ``timeout`` s after ``since`` at most."""
    def cancelled() -> Any:
        entry = store.inbox.get(user_id, entry_id)
        return entry if entry.status == "cancelled" else None

    return wait_until(cancelled, f"{what} to be cancelled after /stop",
                      timeout=max(0.0, since + timeout - time.monotonic()),
                      seen=lambda: store.inbox.get(user_id, entry_id).status)


def in_a_turn(ctx: ToolContext) -> None:
    """Give ``ctx`` an inbox entry, as a turn has, so a /stop can be recorded for it."""
    ctx.inbox_id = ctx.store.inbox.add(ctx.user_id, InboundMessage(
        platform="http", chat_id="alice", account=ctx.account, platform_message_id="m1",
        text="run it"))


async def stop_once_begun(ctx: ToolContext, running: Awaitable[str], root: Path,
                          returns_within: float = 60.0) -> str:
    """Once a file ``began`` holding the running process' id appears under ``root``, send
    /stop; return the tool's output after checking the process is gone."""
    task = asyncio.ensure_future(running)
    pid = int((await until_found(root, "began")).read_text())
    assert alive(pid)
    assert ctx.store.cancels.request_current(ctx.user_id, ctx.chat_key, by=ctx.account)
    out = await asyncio.wait_for(task, returns_within)
    await until(lambda: not alive(pid), "the command to end after /stop")
    return out
