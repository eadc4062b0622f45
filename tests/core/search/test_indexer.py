"""Message vectors are computed off the turn's path (core/search/indexer.py): by a niced child
process, never in the process that runs turns; a turn does not wait for it."""

import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pydantic import SecretStr

from core.messages import InboundMessage
from core.search import embed, indexer
from core.search.indexer_child import NICENESS
from functions.dispatch import LocalDispatcher
from functions.ingress import receive
from functions.runtime import compose
from iris_testing import procs
from iris_testing.scripted_model import FixedRouter
from iris_testing.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.process


@pytest.fixture
def process_runtime(settings, store, scripted):
    configured = settings.model_copy(
        update={"api_key": SecretStr("test-key"), "search_indexer": "process"}
    )
    rt = compose(
        configured, dispatcher=LocalDispatcher(), store=store, router=FixedRouter(scripted)
    )
    yield rt
    rt.close()


def send(rt, text, pmid):
    async def go():
        received = await receive(
            rt,
            InboundMessage(
                platform="http",
                chat_id="alice",
                account="http:alice",
                platform_message_id=pmid,
                text=text,
            ),
        )
        await rt.dispatcher.idle()  # the turn and its after-turn hooks
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def test_a_turn_completes_while_the_indexer_is_stopped(process_runtime, scripted):
    rt = process_runtime
    store = rt.store
    user = store.users.for_account("http:alice")
    worker = rt.indexer
    assert worker.request(user, "no-such-session")  # starts the child
    os.kill(worker.pid, signal.SIGSTOP)
    try:
        scripted.then("Marine biology sounds fascinating.")
        entry = send(rt, "I graduated with a degree in marine biology", "1")
        assert entry.status == "done"
        assert store.vectors.count_missing(user, embed.FULL) == 2  # nothing embedded yet
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    wait_until(
        lambda: store.vectors.count_missing(user, embed.FULL) == 0,
        "the child embeds the turn once it runs again",
        timeout=120,
    )
    assert store.vectors.counts(user) == {embed.FULL: 2}
    assert store.vectors.counts(store.users.for_account("http:bob")) == {}
    assert worker.pid != os.getpid()


def test_a_full_queue_drops_the_request_and_the_turn_goes_on(settings):
    worker = indexer.Indexer(
        settings.model_copy(update={"search_indexer": "process"}), queue_size=1
    )
    try:
        assert worker.request("u1", "s1")
        os.kill(worker.pid, signal.SIGSTOP)
        try:
            wait_until(lambda: worker._queue.full(), "the one slot is taken")
            assert not worker.request("u1", "s2")
            assert worker.dropped == 1
        finally:
            os.kill(worker.pid, signal.SIGCONT)
    finally:
        worker.close()


def test_turns_load_no_extraction_library_and_vectors_come_from_the_child(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    code = (
        f"import runpy, sys; sys.argv = ['probe', {str(home)!r}]; "
        "runpy.run_module('tests.core.search.indexer_probe', run_name='__main__')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["messages"] == 6  # user, assistant; user, call, tool result, assistant
    assert seen["child"] not in (None, seen["parent"])
    assert seen["after_turns"] == []
    assert seen["after_indexing"] == []


def indexing_children() -> set[int]:
    """This process's multiprocessing children that are not its resource tracker."""
    return {pid for pid in procs.children() if "spawn_main" in procs.cmdline(pid)}


def test_runtimes_dropped_without_close_leave_no_child(settings, scripted, tmp_path):
    before = indexing_children()
    started = set()
    for n in range(3):  # one database each: one child each
        configured = settings.model_copy(update={
            "api_key": SecretStr("test-key"), "search_indexer": "process",
            "db_url": f"file:{tmp_path / f'db{n}.db'}",
        })
        rt = compose(configured, dispatcher=LocalDispatcher(), router=FixedRouter(scripted))
        scripted.then("Hello.")
        assert send(rt, "hi", f"m{n}").status == "done"  # its after-turn hook starts the child
        started |= indexing_children() - before
        del rt
    assert len(started) == 3
    gc.collect()
    assert not any(procs.exists(pid) for pid in started), "children left (or not reaped)"
    assert indexing_children() == before


def test_close_stops_the_child_and_may_be_repeated(process_runtime):
    rt = process_runtime
    assert rt.indexer.request("u1", "s1")
    child = rt.indexer.pid
    rt.close()
    assert not procs.exists(child)
    rt.close()
    assert not rt.indexer.request("u1", "s2")  # a closed indexer starts nothing
    assert rt.indexer.pid is None and not procs.exists(child)


def test_the_child_outlives_the_thread_that_asked_first(process_runtime, scripted):
    rt = process_runtime
    release = threading.Event()

    def ask() -> None:
        rt.indexer.request("nobody", "nothing")
        release.wait()

    asker = threading.Thread(target=ask)
    asker.start()
    wait_until(lambda: rt.indexer.pid is not None, "the child to be started")
    child = rt.indexer.pid
    wait_until(lambda: procs.nice(child) == procs.nice(os.getpid()) + NICENESS,
               "the child to arm its parent-death signal (it renices itself next)")
    release.set()
    asker.join()
    wait_until(lambda: not Path(f"/proc/self/task/{asker.native_id}").exists(),
               "the asking thread to be gone from the kernel too")
    scripted.then("Hello.")
    assert send(rt, "hi", "1").status == "done"
    user = rt.store.users.for_account("http:alice")
    wait_until(lambda: rt.store.vectors.count_missing(user, embed.FULL) == 0,
               "the same child to embed the turn")
    assert (rt.indexer.pid, rt.indexer.started) == (child, 1)


def test_a_child_that_died_is_replaced(settings):
    worker = indexer.Indexer(settings.model_copy(update={"search_indexer": "process"}))
    try:
        assert worker.request("u1", "s1")
        first = worker.pid
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: worker._process.exitcode is not None, "the child to be gone")
        assert worker.request("u1", "s2")
        assert worker.pid != first and worker.started == 2
        assert not procs.exists(first)  # reaped
    finally:
        worker.close()
