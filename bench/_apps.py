"""App factories used only by the benchmarks (served with ``uvicorn --factory``)."""

from __future__ import annotations

from fastapi import FastAPI

from core.config import load_settings
from functions.app import create_app
from functions.dispatch import LocalDispatcher
from functions.runtime import compose
from iris_testing.scripted_model import FixedRouter, ScriptedModel


def scripted_app() -> FastAPI:
    """The real app, with an in-process model that always answers at once (no litellm)."""
    model = ScriptedModel()
    model.steps = [lambda messages: "hello"] * 10_000
    dispatcher = LocalDispatcher()
    runtime = compose(load_settings(), dispatcher=dispatcher, router=FixedRouter(model))
    return create_app(runtime)


class HandOffDispatcher:
    """Records dispatches without draining, as Modal's web container does (it spawns the worker
    in another container): what the webhook/API ack path costs on its own."""

    def __init__(self) -> None:
        self.dispatched: list[object] = []

    async def drain(self, chat: object) -> None:
        self.dispatched.append(chat)


def ack_only_app() -> FastAPI:
    runtime = compose(load_settings(), dispatcher=HandOffDispatcher())
    return create_app(runtime)
