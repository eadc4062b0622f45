"""One user's stuck blocking work does not delay another user's turn (issue 28, item 2), over
real HTTP: eight users whose prompt building blocks (a section that waits on an event, as a
thread blocked in ``open`` of a FIFO would) hold eight threads; another user's turn still
answers, and each stuck turn ends with a clear "took too long" reply at ``blocking_timeout``
instead of hanging. With the shared default executor (6 threads here) the other user waited
behind them."""

from __future__ import annotations

import threading

import openai
import pytest

from core import lanes
from core.contracts.prompt import PromptInputs
from iris_testing.llm_server import ScriptedLLM
from iris_testing.waiting import wait_until
from tests.fakes.stack import emulator_stack

ATTACKERS = 8
# What a stuck turn waits before it is given up; the test waits it out once (30 s before).
# Alice's prompt building must get a thread within the same bound: with a shared executor she
# queues behind the stuck threads and is given up too.
TIMEOUT = 10


def test_stuck_users_do_not_delay_another_users_turn(monkeypatch):
    from core.model.llm import load_litellm

    load_litellm()  # its cold import (seconds on a busy machine) is not what is measured here
    llm = ScriptedLLM()
    release = threading.Event()
    stuck: set[str] = set()
    lock = threading.Lock()
    with emulator_stack(llm, monkeypatch, IRIS_BLOCKING_TIMEOUT=str(TIMEOUT)) as stack:
        rt = stack.runtime
        mallory = {rt.store.users.for_account(f"http:mallory{n}") for n in range(ATTACKERS)}

        def blocking_section(inputs: PromptInputs) -> str:
            if inputs.user_id in mallory:
                with lock:
                    stuck.add(inputs.user_id)
                release.wait()
            return "Be brief."

        rt.sections = [*rt.sections, blocking_section]
        failures: dict[str, str] = {}

        def attack(n: int) -> None:
            try:
                stack.client.chat.completions.create(
                    model="iris", user=f"mallory{n}",
                    messages=[{"role": "user", "content": "hi"}])
            except openai.APIStatusError as exc:
                failures[f"mallory{n}"] = str(exc)

        attackers = [threading.Thread(target=attack, args=(n,)) for n in range(ATTACKERS)]
        try:
            for thread in attackers:
                thread.start()
            wait_until(lambda: len(stuck) == ATTACKERS, "every attacker's thread to block",
                       seen=lambda: len(stuck))
            llm.reply("hello alice")
            answer = stack.client.chat.completions.create(
                model="iris", user="alice", messages=[{"role": "user", "content": "hi"}])
            assert answer.choices[0].message.content == "hello alice"
            assert len(stuck) == ATTACKERS  # still stuck while alice was answered
            for thread in attackers:
                thread.join(TIMEOUT * 6)
            assert sorted(failures) == sorted(f"mallory{n}" for n in range(ATTACKERS))
            assert all(f"took longer than {TIMEOUT} s and was given up" in text
                       for text in failures.values()), failures
            assert lanes.pool("prompt").state().given_up >= ATTACKERS
            assert len(llm.requests) == 1  # no model call for a turn that could not start
        finally:
            release.set()


@pytest.fixture(autouse=True)
def _default_lanes():
    yield
    from core.config import load_settings

    lanes.configure(load_settings())
