"""What the Modal functions run, without Modal: settings checks, runtime wiring, the bodies.

``infra/modal_app.py`` only declares containers and calls these, so every body also runs in a
plain process (``.local()`` in the tests, against the emulator's store).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.config import Settings, load_settings
from core.errors import ConfigError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from functions.runtime import Runtime

log = logging.getLogger("iris.cloud")

REQUIRED_SECRET_KEYS = ("IRIS_MODEL", "IRIS_DB_URL", "IRIS_OBJECTS_URL")
"""Keys the Modal secret must hold; Modal refuses to deploy without them."""


@dataclass(frozen=True)
class CloudProblem:
    setting: str
    message: str
    fix: str


def cloud_problems(settings: Settings) -> list[CloudProblem]:
    """Every setting that cannot work in a serverless container, with its fix."""
    found: list[CloudProblem] = []
    if not settings.db_is_remote:
        found.append(CloudProblem(
            "db_url", "a file: database lives inside one container and vanishes with it",
            "use a Turso database: db_url: libsql://NAME-ORG.turso.io"))
    elif settings.db_url.startswith("libsql://") and settings.db_auth_token is None:
        found.append(CloudProblem(
            "db_auth_token", "a Turso database needs an auth token",
            "`turso db tokens create NAME`, then IRIS_DB_AUTH_TOKEN=… in .env"))
    if not settings.objects_url.startswith("s3://"):
        found.append(CloudProblem(
            "objects_url", "a local directory is not shared between containers",
            "use an S3 or R2 bucket: objects_url: s3://BUCKET/iris (R2: + s3_endpoint_url)"))
    if not settings.model:
        found.append(CloudProblem(
            "model", "no model configured (the embedded demo model only runs in `iris dev`)",
            "model: anthropic/claude-sonnet-4-5, openai/gpt-4o-mini, … in iris.yaml"))
    if settings.sandbox_backend == "local":
        found.append(CloudProblem(
            "sandbox_backend", "'local' would run users' commands inside the function container",
            "sandbox_backend: modal (or daytona)"))
    return found


def require_cloud_settings(settings: Settings) -> Settings:
    problems = cloud_problems(settings)
    if problems:
        raise ConfigError(
            ", ".join(p.setting for p in problems),
            "; ".join(f"{p.setting}: {p.message} ({p.fix})" for p in problems),
        )
    return settings


def build_cloud_runtime(settings: Settings | None = None) -> Runtime:
    """The runtime of one container, with the configured dispatcher (``modal`` in the cloud,
    where the container sets IRIS_DISPATCHER)."""
    from functions.runtime import compose

    return compose(settings or load_settings())


def check_container(in_cloud: bool) -> None:
    """Fail a real container's start with every misconfiguration named (seen in the logs)."""
    if in_cloud:
        require_cloud_settings(load_settings())


COMMON_MODULES = ("functions.asgi", "functions.runtime", "functions.tick", "functions.sweeper",
                  "functions.worker")
WEB_MODULES = ("fastapi", "functions.app", "functions.http_api")
PLATFORM_MODULES = ("functions.telegram", "functions.slack", "functions.whatsapp",
                    "functions.discord", "functions.email_webhook", "functions.teams",
                    "functions.googlechat", "jwt", "functions.line",
                    "functions.sms", "functions.matrix", "telegram", "slack_sdk",
                    "httpx", "smtplib", "cryptography.hazmat.primitives.asymmetric.ed25519")
# Semantic search (numpy encoder); the model weights load on first use, after the reply.
SEARCH_MODULES = ("numpy", "tokenizers", "core.search.encoder", "core.search.embed")


def preload_common() -> None:
    """Imports every Iris container needs (runtime, tools, tick), done at module import in a
    container, so each function's memory snapshot holds them; the tick has no other hook."""
    from core.tools import default_toolset

    _preload(COMMON_MODULES, PLATFORM_MODULES)
    default_toolset()


def preload_web() -> None:
    """Imports the webhook path needs, done before the memory snapshot. No I/O, no secrets."""
    _preload(WEB_MODULES, PLATFORM_MODULES)


def preload_worker() -> None:
    """Imports a turn needs, litellm above all (3+ s), done before the memory snapshot. litellm
    is left out when the secret's models are all the direct client's (``IRIS_MODEL`` an
    ``openai/`` model at ``IRIS_MODEL_API_BASE``): it would hold ~130 MiB for nothing."""
    import os

    from core.model.llm import load_litellm, needs_litellm_for

    env = os.environ
    if needs_litellm_for((env.get("IRIS_MODEL"), env.get("IRIS_CHEAP_MODEL")),
                         env.get("IRIS_MODEL_API_BASE"), env.get("IRIS_MODEL_CLIENT", "auto")):
        load_litellm()
    _preload(COMMON_MODULES, PLATFORM_MODULES + SEARCH_MODULES)
    from functions.runtime import default_after_turn, default_sections, default_tool_providers

    # The runtime builds these on first use; build them now so the snapshot holds the imports.
    default_sections()
    default_after_turn()
    default_tool_providers()


def preload_indexer() -> None:
    """Imports the ``Indexer`` function needs (the store, numpy and the encoder's modules),
    done before its memory snapshot; the weights load on the first call."""
    _preload(("core.store", "core.search.indexer_child", *SEARCH_MODULES), ())


def index_sessions(requests: list[list[str]], settings: Settings | None = None) -> int:
    """The ``Indexer`` function's body: embed the requested sessions' messages that have no
    vectors (``[user_id, session_id]`` pairs, as the worker's ModalIndexer spawns them)."""
    from core.search import embed
    from core.search.indexer_child import index_requests
    from core.store import open_store

    pairs = [(str(user), str(session)) for user, session in requests]
    if not pairs or not embed.available():
        return 0
    store = open_store(settings or load_settings())
    try:
        return index_requests(store, pairs)
    finally:
        store.close()


def _preload(required: tuple[str, ...], optional: tuple[str, ...]) -> None:
    import importlib
    import importlib.util

    for name in required:
        importlib.import_module(name)
    for name in optional:
        try:
            if importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
        except Exception as exc:
            log.warning("preloading %s failed: %s", name, exc)


def web_app() -> FastAPI:
    from functions.asgi import build

    return build()


async def drain_chat(runtime: Runtime, user_id: str, chat_key: str) -> int:
    from core.contracts.dispatch import ChatRef
    from core.lanes import install_default_executor
    from functions.worker import drain

    install_default_executor()  # bounded daemon threads: a stuck one never holds the exit
    return await drain(runtime, ChatRef(user_id, chat_key))


async def tick_once(runtime: Runtime | None = None) -> dict[str, Any]:
    """One cron tick with a fresh runtime (closed afterwards); returns a summary for the logs."""
    from core.lanes import install_default_executor
    from functions.tick import run_tick

    install_default_executor()
    owned = runtime is None
    rt = runtime or build_cloud_runtime()
    try:
        report = await run_tick(rt)
    finally:
        idle = getattr(rt.dispatcher, "idle", None)
        if idle is not None:
            await idle()
        if owned:
            rt.close()
    swept = report.sweep
    return {
        "cron_ran": report.cron_ran,
        "chats_resumed": swept.chats_resumed if swept else 0,
        "deliveries_attempted": swept.deliveries_attempted if swept else 0,
        "leases_expired": swept.leases_expired if swept else 0,
    }
