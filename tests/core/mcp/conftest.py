"""Run coroutines on a fresh event loop and fail on anything the loop reports on the side."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import pytest


@pytest.fixture
def run(caplog) -> Callable[[Coroutine[Any, Any, Any]], Any]:
    """``run(coro)``: its result; fails on loop errors ("Task was destroyed", unretrieved
    exceptions) and on client-side error logs; the test servers' own logs are theirs."""
    reported: list[dict[str, Any]] = []

    async def guarded(coro: Coroutine[Any, Any, Any]) -> Any:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: reported.append(ctx))
        return await coro

    def runner(coro: Coroutine[Any, Any, Any]) -> Any:
        with caplog.at_level(logging.WARNING):
            result = asyncio.run(guarded(coro))
            gc.collect()
        assert reported == []
        errors = [
            r
            for r in caplog.records
            if r.levelno >= logging.ERROR and not r.name.startswith("mcp.server")
        ]
        assert errors == [], [r.getMessage() for r in errors]
        return result

    return runner
