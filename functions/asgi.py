"""ASGI entry point: ``uvicorn --factory functions.asgi:build`` serves Iris from its configuration.

The emulator (``iris dev``) and Modal's web function build the same app through this path."""

from __future__ import annotations

from fastapi import FastAPI

from core.config import load_settings
from functions.app import create_app
from functions.runtime import compose


def build() -> FastAPI:
    return create_app(compose(load_settings()))
