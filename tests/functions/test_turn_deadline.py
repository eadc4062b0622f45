"""A turn that hangs (its model call never answers) is stopped after ``turn_timeout`` on the
store's clock, counted as an attempt, resumed by the sweeper, and given up with a reply after
MAX_ATTEMPTS: never resumed forever, never holding its chat forever (issue 28, item 2)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import httpx

from core.clock import ManualClock
from core.config import load_settings
from core.store import open_store
from core.store.db import Row
from functions.dispatch import LocalDispatcher
from functions.runtime import compose
from functions.worker import MAX_ATTEMPTS, lease_name
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from iris_testing.waiting import wait_until
from local_dev.emulator import Emulator, local_settings
from tests.fakes.stack import API_KEY, scripted_env

TURN_TIMEOUT = 300.0


def test_a_hung_turn_is_given_up_after_max_attempts_through_the_sweeper(monkeypatch):
    llm = ScriptedLLM()
    for _ in range(MAX_ATTEMPTS + 1):
        llm.hang(3600)  # held until the client goes away
    clock = ManualClock(datetime(2031, 3, 4, 9, 30, tzinfo=UTC))
    with serve(llm.app) as model:
        # the lease outlives every clock move here: only the turn's deadline can end a hang
        # (a live worker renews its lease for as long as its turn runs)
        env = scripted_env(model.url, IRIS_TURN_TIMEOUT=str(TURN_TIMEOUT),
                           IRIS_MODEL_TIMEOUT="3600", IRIS_LEASE_SECONDS="36000")
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        settings = local_settings(load_settings())
        store = open_store(settings, clock=clock)
        dispatcher = LocalDispatcher()
        emulator = Emulator(runtime=compose(settings, dispatcher=dispatcher, store=store),
                            dispatcher=dispatcher)
        # the real ticker runs the sweeper every 0.2 s of real time
        with serve(emulator.app(tick_seconds=0.2)) as iris:
            answered: list[httpx.Response] = []

            def ask() -> None:
                answered.append(httpx.post(
                    f"{iris.url}/v1/chat/completions", timeout=300,
                    headers={"Authorization": f"Bearer {API_KEY}"},
                    json={"model": "iris", "user": "alice",
                          "messages": [{"role": "user", "content": "hello"}]}))

            waiting = threading.Thread(target=ask)
            waiting.start()
            row = wait_until(lambda: store.db.one("SELECT * FROM inbox"),
                             "the message to be stored")
            alice = row["user_id"]
            lease = lease_name(type("Chat", (), {"user_id": alice, "chat_key": row["chat_key"]}))

            def entry() -> Row | None:
                return store.db.one("SELECT attempts, status, reply FROM inbox WHERE id = ?",
                                    (row["id"],))

            for attempt in range(1, MAX_ATTEMPTS + 1):
                wait_until(lambda a=attempt: len(llm.requests) == a,
                           f"attempt {attempt}'s model call", seen=entry)
                assert entry()["status"] == "pending"
                assert store.leases.holder(lease) is not None  # the hung turn holds its chat
                clock.advance(TURN_TIMEOUT + 1)
                # stopped, counted; the sweeper resumes it (or, after the last, gives it up)
                wait_until(lambda a=attempt: entry()["attempts"] > a,
                           f"attempt {attempt} to be stopped and resumed", seen=entry)
            done = wait_until(lambda: entry()["status"] != "pending" and entry(),
                              "the entry to be given up", seen=entry)
            assert done["status"] == "failed"
            assert done["attempts"] == MAX_ATTEMPTS + 1
            assert "took too long each time" in done["reply"]
            waiting.join(120)
            assert answered and answered[0].status_code >= 500
            assert "took too long each time" in answered[0].text
            # given up: no further model call, however many sweeps run
            assert len(llm.requests) == MAX_ATTEMPTS
            assert store.inbox.stalled_chats(older_than=clock.now() + 1) == []
        store.close()
