"""ASGI entry point: ``uvicorn --factory functions.asgi:build`` serves Iris from its configuration.

The emulator (``iris dev``) and Modal's web function build the same app through this path."""

from __future__ import annotations

from fastapi import FastAPI

from core.config import load_settings
from core.dispatch import Dispatcher
from functions.app import create_app
from functions.runtime import build_runtime


def dispatcher_for(name: str) -> Dispatcher:
    if name == "modal":
        from functions.dispatch_modal import ModalDispatcher

        return ModalDispatcher()
    from functions.dispatch import LocalDispatcher

    return LocalDispatcher()


def build() -> FastAPI:
    settings = load_settings()
    dispatcher = dispatcher_for(settings.dispatcher)
    runtime = build_runtime(settings, dispatcher)
    bind = getattr(dispatcher, "bind", None)
    if bind is not None:
        bind(runtime)
    return create_app(runtime)
