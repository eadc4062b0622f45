"""Indexing in the cloud (functions/indexer_modal.py): a Modal worker's runtime hands sessions to
the deployed ``Indexer`` function in coalesced batches instead of starting an indexing child;
the function's body embeds them. Modal is the recording fake bound to the real SDK's
signatures and raising its own exceptions (iris_testing/modal_fake.py)."""

import asyncio
import threading

import modal
import pytest
from pydantic import SecretStr

from core.messages import InboundMessage
from core.search import embed
from functions.dispatch import LocalDispatcher
from functions.indexer_modal import ModalIndexer
from functions.ingress import receive
from functions.runtime import compose
from infra.cloud import index_sessions
from iris_testing.scripted_model import FixedRouter
from iris_testing.waiting import wait_until
from tests.infra.fakes import FakeModal


class Held:
    """An ``on_spawn`` that holds the first spawned call until released, so what is requested
    meanwhile is queued behind it (no sleeps: events)."""

    def __init__(self, then=None):
        self.entered = threading.Event()
        self.release = threading.Event()
        self.then = then

    def __call__(self, pairs):
        self.entered.set()
        assert self.release.wait(60)
        if self.then is not None:
            self.then(pairs)


def test_requests_are_spawned_in_coalesced_batches():
    held = Held()
    sdk = FakeModal(on_spawn=held)
    indexer = ModalIndexer("iris", sdk=sdk)
    assert indexer.request("usr_1", "s1")
    assert held.entered.wait(60)  # the first batch is being spawned
    for user, session in [("usr_2", "s2"), ("usr_1", "s1"), ("usr_2", "s2"), ("usr_3", "s3")]:
        assert indexer.request(user, session)
    held.release.set()
    indexer.close()  # hands over what is queued
    assert sdk.spawned("index") == [
        ([["usr_1", "s1"]],),
        ([["usr_1", "s1"], ["usr_2", "s2"], ["usr_3", "s3"]],),
    ]
    assert sdk.calls[0].args == ("iris", "Indexer")
    assert not indexer.request("usr_4", "s4")  # closed


def test_a_full_queue_refuses_without_blocking():
    held = Held()
    indexer = ModalIndexer("iris", sdk=FakeModal(on_spawn=held), queue_size=2)
    assert indexer.request("usr_1", "a")
    assert held.entered.wait(60)
    assert indexer.request("usr_1", "b") and indexer.request("usr_1", "c")
    assert not indexer.request("usr_1", "d")
    assert indexer.dropped == 1
    held.release.set()
    indexer.close()
    assert indexer.spawned == 2


def test_transient_failures_are_retried_and_a_missing_app_drops_the_batch(caplog):
    sdk = FakeModal()
    sdk.fail_next(modal.exception.ConnectionError("reset"))
    indexer = ModalIndexer("iris", sdk=sdk, backoff=0)
    indexer.request("usr_1", "s1")
    indexer.close()
    assert sdk.spawned("index") == [([["usr_1", "s1"]],)] * 2
    assert (indexer.spawned, indexer.dropped) == (1, 0)

    sdk = FakeModal()
    sdk.fail_next(modal.exception.NotFoundError("no such app"))
    indexer = ModalIndexer("iris", sdk=sdk, backoff=0)
    indexer.request("usr_1", "s1")
    indexer.close()
    assert (indexer.spawned, indexer.dropped) == (0, 1)
    assert "is it deployed?" in caplog.text


@pytest.fixture
def cloud_runtime(settings, store, scripted):
    """A runtime configured as a Modal worker's (dispatcher modal, search_indexer process),
    turns run in-process."""
    configured = settings.model_copy(update={
        "api_key": SecretStr("test-key"), "search_indexer": "process", "dispatcher": "modal"})
    rt = compose(configured, dispatcher=LocalDispatcher(), store=store,
                 router=FixedRouter(scripted))
    yield rt
    rt.close()


def test_a_modal_workers_turn_is_indexed_by_the_indexer_function(cloud_runtime, scripted):
    rt = cloud_runtime
    assert isinstance(rt.indexer, ModalIndexer)  # no child process in a worker container
    assert rt.indexer.app_name == rt.settings.modal_app
    embedded = []
    rt.indexer.sdk = sdk = FakeModal(  # the spawned call runs the function's body
        on_spawn=lambda pairs: embedded.append(index_sessions(pairs, rt.settings)))
    scripted.then("Marine biology sounds fascinating.")

    async def turn():
        received = await receive(rt, InboundMessage(
            platform="http", chat_id="alice", account="http:alice", platform_message_id="1",
            text="I graduated with a degree in marine biology"))
        await rt.dispatcher.idle()
        return received.user_id

    user = asyncio.run(turn())
    wait_until(lambda: rt.store.vectors.count_missing(user, embed.FULL) == 0,
               "the Indexer function embeds the turn", timeout=120)
    assert rt.store.vectors.counts(user) == {embed.FULL: 2}
    assert embedded == [2]
    ((pairs,),) = sdk.spawned("index")
    assert [user for user, _ in pairs] == [user]


def test_the_function_body_skips_nothing_it_was_not_asked_for(cloud_runtime):
    assert index_sessions([], cloud_runtime.settings) == 0
