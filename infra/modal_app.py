"""The Iris app on Modal: declarations only; the bodies live in ``infra/cloud.py``.

    Web     the FastAPI app of ``functions.asgi.build()`` (HTTP API, Telegram, Slack routes)
    Worker  drains one chat; the web function's ModalDispatcher ``.spawn()``s ``Worker().drain``
    Indexer embeds sessions' new messages for search; the Worker's ModalIndexer ``.spawn()``s
            ``Indexer().index`` after turns, so the encoder never runs in a Worker container
    tick    every minute: due cron jobs (``functions.cron.tick``), daily skill curation, the sweeper

Every function scales to zero (``min_containers=0``) and starts from a memory snapshot taken after
the imports (module import in a container runs ``preload_common``; each class adds its own
``@modal.enter(snap=True)``: litellm for the Worker). Settings come from the Modal secret named
like the app (``iris``), which ``iris deploy`` creates from your iris.yaml and .env. Users'
sandboxes live in a separate app (``SANDBOX_APP_NAME``) created on first use by ModalSandbox.

Deploy: ``iris deploy`` (checks everything first) or ``modal deploy infra/modal_app.py``.
"""

from __future__ import annotations

import os
from typing import Any

import modal

from infra.cloud import REQUIRED_SECRET_KEYS
from infra.image import build_image, recipe

APP_NAME = os.environ.get("IRIS_MODAL_APP") or "iris"
SECRET_NAME = APP_NAME
SANDBOX_APP_NAME = os.environ.get("IRIS_SANDBOX_MODAL_APP") or "iris-sandboxes"

WEB_SCALEDOWN_SECONDS = 60
WEB_TIMEOUT_SECONDS = 660  # the HTTP API waits up to 600 s for a turn
WEB_MAX_INPUTS = 100
WORKER_SCALEDOWN_SECONDS = 60
WORKER_TIMEOUT_SECONDS = 900  # a stopped drain leaves its entry pending; the sweeper resumes it
WORKER_MAX_INPUTS = 16
INDEXER_SCALEDOWN_SECONDS = 30
INDEXER_TIMEOUT_SECONDS = 600
INDEXER_MAX_CONTAINERS = 2  # CPU-bound batches; more spawns wait in Modal's queue, not here
TICK_SCHEDULE = "* * * * *"
TICK_SCALEDOWN_SECONDS = 2  # the minimum: a tick container must not idle into the next minute
TICK_TIMEOUT_SECONDS = 120

CONTAINER_ENV = {
    "IRIS_DISPATCHER": "modal",
    "IRIS_MODAL_APP": APP_NAME,
    "IRIS_SANDBOX_MODAL_APP": SANDBOX_APP_NAME,
}

DECLARED: dict[str, dict[str, Any]] = {}
"""What each function was declared with, by name (read by the offline tests and the docs)."""


def declare(name: str, **options: Any) -> dict[str, Any]:
    DECLARED[name] = options
    return options


if not modal.is_local():
    from infra.cloud import preload_common

    preload_common()

app = modal.App(APP_NAME)
image = build_image(recipe(local=modal.is_local()), modal)
secret = modal.Secret.from_name(SECRET_NAME, required_keys=list(REQUIRED_SECRET_KEYS))
common = {"image": image, "secrets": [secret], "env": CONTAINER_ENV, "min_containers": 0}


@app.cls(**declare(
    "Web", **common, scaledown_window=WEB_SCALEDOWN_SECONDS, timeout=WEB_TIMEOUT_SECONDS,
    enable_memory_snapshot=True,
))
@modal.concurrent(max_inputs=WEB_MAX_INPUTS)
class Web:
    @modal.enter(snap=True)
    def preload(self) -> None:
        from infra.cloud import preload_web

        preload_web()

    @modal.asgi_app()
    def app(self) -> Any:
        from infra.cloud import check_container, web_app

        check_container(in_cloud=not modal.is_local())
        return web_app()


@app.cls(**declare(
    "Worker", **common, scaledown_window=WORKER_SCALEDOWN_SECONDS,
    timeout=WORKER_TIMEOUT_SECONDS, enable_memory_snapshot=True,
))
@modal.concurrent(max_inputs=WORKER_MAX_INPUTS)
class Worker:
    @modal.enter(snap=True)
    def preload(self) -> None:
        from infra.cloud import preload_worker

        preload_worker()

    @modal.enter(snap=False)
    def start(self) -> None:
        from infra.cloud import check_container

        check_container(in_cloud=not modal.is_local())
        self.runtime()

    @modal.method()
    async def drain(self, user_id: str, chat_key: str) -> int:
        from infra.cloud import drain_chat

        return await drain_chat(self.runtime(), user_id, chat_key)

    @modal.exit()
    def stop(self) -> None:
        rt = getattr(self, "_runtime", None)
        if rt is not None:
            rt.close()

    def runtime(self) -> Any:
        rt = getattr(self, "_runtime", None)
        if rt is None:
            from infra.cloud import build_cloud_runtime

            rt = self._runtime = build_cloud_runtime()
        return rt


@app.cls(**declare(
    "Indexer", **common, scaledown_window=INDEXER_SCALEDOWN_SECONDS,
    timeout=INDEXER_TIMEOUT_SECONDS, max_containers=INDEXER_MAX_CONTAINERS,
    enable_memory_snapshot=True,
))
class Indexer:
    @modal.enter(snap=True)
    def preload(self) -> None:
        from infra.cloud import preload_indexer

        preload_indexer()

    @modal.method()
    def index(self, requests: list[list[str]]) -> int:
        from infra.cloud import check_container, index_sessions

        check_container(in_cloud=not modal.is_local())
        return index_sessions(requests)


@app.function(**declare(
    "tick", **common, schedule=modal.Cron(TICK_SCHEDULE), scaledown_window=TICK_SCALEDOWN_SECONDS,
    timeout=TICK_TIMEOUT_SECONDS, enable_memory_snapshot=True,
))
async def tick() -> dict[str, Any]:
    from infra.cloud import check_container, tick_once

    check_container(in_cloud=not modal.is_local())
    return await tick_once()
