"""On Modal the turn runs in a Worker container and the SSE response waits in a Web container:
the answer's deltas cross over a Modal Queue. Here the web runtime and the worker runtime are
two runtimes (their own ``answers``), the worker draining in its own thread and event loop when
the fake Modal spawns it, the Queue being the fake's (bound to the real SDK's signatures)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest

from core.config import load_settings
from core.contracts.dispatch import ChatRef
from functions.answer_relay_modal import ModalAnswerRelay, partition_for
from functions.app import create_app
from functions.dispatch_modal import ModalDispatcher
from functions.runtime import Runtime, compose
from functions.worker import drain
from iris_testing.llm_server import Gate, ScriptedLLM
from iris_testing.modal_fake import FakeModal
from iris_testing.server import serve
from tests.fakes.stack import API_KEY, scripted_env
from tests.functions.test_http_stream import body, deltas

HEADERS = {"Authorization": f"Bearer {API_KEY}"}


@dataclass
class Cloud:
    url: str
    web: Runtime
    worker: Runtime
    sdk: FakeModal


@contextmanager
def modal_stack(llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cloud]:
    """A web runtime that spawns its worker through the fake Modal, served on loopback; each
    spawn drains the chat with the worker runtime in a thread of its own."""
    drains: list[threading.Thread] = []
    holder: dict[str, Runtime] = {}

    def spawned(user_id: str, chat_key: str) -> None:
        run = threading.Thread(target=asyncio.run,
                               args=(drain(holder["worker"], ChatRef(user_id, chat_key)),))
        drains.append(run)
        run.start()

    sdk = FakeModal(on_spawn=spawned)
    with serve(llm.app) as model:
        for name, value in scripted_env(model.url, IRIS_DISPATCHER="modal").items():
            monkeypatch.setenv(name, value)
        settings = load_settings()
        web = compose(settings, dispatcher=ModalDispatcher(settings.modal_app, sdk=sdk))
        holder["worker"] = compose(settings, store=web.store,
                                   dispatcher=ModalDispatcher(settings.modal_app, sdk=sdk))
        try:
            with serve(create_app(web)) as iris:
                yield Cloud(iris.url, web, holder["worker"], sdk)
        finally:
            for run in drains:
                run.join(60)


def relay_puts(sdk: FakeModal) -> list[dict]:
    return [c.kwargs for c in sdk.calls if c.name == "Queue.put.aio"]


def test_the_answer_streams_from_another_container_before_the_model_finishes(monkeypatch):
    llm = ScriptedLLM()
    gate = Gate()
    llm.reply("Tea is ready now.", gate=gate)
    gate.allow(2)  # the role chunk and "Tea "
    with modal_stack(llm, monkeypatch) as cloud, httpx.Client(base_url=cloud.url,
                                                              timeout=60) as client:
        assert isinstance(cloud.web.answers, ModalAnswerRelay)
        assert cloud.worker.answers is not cloud.web.answers
        with client.stream("POST", "/v1/chat/completions", json=body("tea?"),
                           headers={**HEADERS, "Idempotency-Key": "tea-1"}) as response:
            assert response.status_code == 200
            pieces = deltas(response.iter_lines())
            assert next(pieces) == "Tea "
            assert gate.sent == 2  # the model has sent nothing more: a partial answer
            status = cloud.web.store.db.scalar(
                "SELECT status FROM inbox WHERE platform_message_id = 'http:sam:tea-1'")
            assert status == "pending"
            gate.open()
            assert "Tea " + "".join(pieces) == "Tea is ready now."
        entry = cloud.web.store.db.query(
            "SELECT id, user_id FROM inbox WHERE platform_message_id = 'http:sam:tea-1'")[0]
        puts = relay_puts(cloud.sdk)
        assert {p["partition"] for p in puts} == {partition_for(entry["user_id"], entry["id"])}
        assert 2 <= len(puts) <= 6  # batched: a few Queue items, the last one the end marker
        assert cloud.sdk.spawned() == [(entry["user_id"], "http:sam")]


def test_a_relay_that_never_delivers_still_ends_with_the_whole_answer(monkeypatch):
    llm = ScriptedLLM()
    llm.reply("Tea is ready now.")
    with modal_stack(llm, monkeypatch) as cloud, httpx.Client(base_url=cloud.url,
                                                              timeout=60) as client:
        relay = cloud.worker.answers
        assert isinstance(relay, ModalAnswerRelay)
        relay.queue().drop_puts = True
        with client.stream("POST", "/v1/chat/completions", json=body("tea?"),
                           headers=HEADERS) as response:
            assert "".join(deltas(response.iter_lines())) == "Tea is ready now."
        assert relay_puts(cloud.sdk)  # the worker did publish; nothing arrived


def test_deltas_are_batched_and_another_users_entry_yields_nothing():
    sdk = FakeModal()

    async def scenario() -> None:
        worker = ModalAnswerRelay("iris-answers", lambda: sdk)
        web = ModalAnswerRelay("iris-answers", lambda: sdk)
        stranger = web.listen("usr_b", 5)
        mine = web.listen("usr_a", 5)
        sink = worker.sink("usr_a", 5)
        for word in ["word "] * 1000:
            sink.text(word)
        sink.reset()
        sink.text("done")
        await worker.end("usr_a", 5)
        got: list[tuple[str, str]] = []
        while not got or got[-1] != ("text", "done"):
            await mine.wait()
            got += [(e.kind, e.text) for e in mine.take()]
        assert got == [("text", "word " * 1000), ("reset", ""), ("text", "done")]
        assert len(relay_puts(sdk)) == 1  # a thousand deltas and the end: one Queue item
        assert stranger.take() == []
        queue = web.queue()
        assert queue.items(partition_for("usr_b", 5)) == []
        assert await queue.get_many.aio(10, block=False, partition=partition_for("usr_b", 5)) == []
        stranger.close()
        mine.close()
        assert len(worker) == 0

    asyncio.run(scenario())


def test_the_queue_fake_fits_the_real_sdk():
    import inspect

    import modal

    sdk = FakeModal()
    queue = sdk.Queue.from_name("iris-answers", create_if_missing=True)
    asyncio.run(queue.put.aio(["x"], partition="p", partition_ttl=60))
    for call in sdk.calls:
        real = {"Queue.from_name": modal.Queue.from_name, "Queue.put.aio": modal.Queue.put}
        args = call.args if call.name == "Queue.from_name" else (None, *call.args)
        inspect.signature(real[call.name]).bind(*args, **call.kwargs)
    with pytest.raises(modal.exception.NotFoundError):
        sdk.Queue.from_name("missing")
    with pytest.raises(modal.exception.InvalidError):
        asyncio.run(queue.put.aio("x", partition="p" * 65))
    import queue as stdlib_queue

    with pytest.raises(stdlib_queue.Empty):
        asyncio.run(queue.get_many.aio(1, timeout=0, partition="empty"))
    assert json.dumps(queue.items("p")) == '[["x"]]'
