"""Helpers for the acting tests: a tool context for a user, and calling a tool the way a turn
does (through a ``Toolset``, so argument checks, error handling and untrusted wrapping apply)."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from core.messages import ToolCall
from core.services import Services
from core.toolkit import Tool, ToolContext, Toolset
from core.tools import default_toolset

_ids = itertools.count(1)


def make_ctx(store, settings, account: str = "http:alice", *, platform: str = "http",
             services: Services | None = None) -> ToolContext:
    user_id = store.users.for_account(account)
    chat_key = f"{platform}:{account.split(':', 1)[1]}"
    session = store.sessions.start(user_id, chat_key, platform)
    return ToolContext(
        store=store, settings=settings,
        services=services or Services.standalone(settings, store), user_id=user_id,
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
