"""End to end over real HTTP: the openai client → the emulator → litellm → a scripted model
whose long terminal command is held for approval; ``/approve 1`` runs it in the turn of the
``/approve`` message, and ``/stop`` in that chat ends it (and that turn) within seconds, while
another user's approved command runs on."""

import asyncio
import threading
import time
from pathlib import Path

import openai
import pytest

from iris_testing.llm_server import ScriptedLLM
from tests.core.acting.support import until_cancelled, until_found
from tests.fakes.stack import emulator_stack
from tests.sandboxes.conftest import alive

LONG = ": hold-me; echo begun; echo $$ > pid && mv pid began && exec sleep 600"


@pytest.fixture
def llm():
    return ScriptedLLM()


def ask(client, text, user):
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=user)
    return answer.choices[0].message.content


def approve_in_background(client, user) -> tuple[threading.Thread, list[Exception]]:
    failed: list[Exception] = []

    def run():
        try:
            ask(client, "/approve 1", user)
        except Exception as exc:  # the waiting request ends when the turn is stopped
            failed.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, failed


def held_for(client, llm, user) -> None:
    llm.tool_call("terminal", {"command": LONG, "timeout": 300}).reply("Send /approve 1.")
    assert ask(client, "wait ten minutes", user) == "Send /approve 1."


def began_pid(workspace: Path) -> int:
    pid = int(asyncio.run(until_found(workspace, "began")).read_text())
    assert alive(pid)
    return pid


def test_stop_ends_a_command_run_by_approve_and_only_that_one(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch, IRIS_SANDBOX_ISOLATION="none") as stack:
        client, rt = stack.client, stack.runtime
        rt.settings = rt.settings.model_copy(
            update={"dangerous_command_patterns": [r"\bhold-me\b"]})
        held_for(client, llm, "alice")
        held_for(client, llm, "bob")
        alice, bob = rt.store.users.resolve("http:alice"), rt.store.users.resolve("http:bob")
        asked_model = len(llm.requests)

        bob_runs, _ = approve_in_background(client, "bob")
        bob_pid = began_pid(rt.settings.home / "workspaces" / bob)
        alice_runs, alice_failed = approve_in_background(client, "alice")
        alice_pid = began_pid(rt.settings.home / "workspaces" / alice)

        asked = time.monotonic()
        assert ask(client, "/stop", "alice").startswith("Stopping:")
        marked = rt.store.db.one("SELECT inbox_id FROM turn_cancels WHERE user_id = ?",
                                 (alice,))["inbox_id"]  # what /stop marked: the /approve turn
        assert rt.store.inbox.get(alice, marked).message.text == "/approve 1"
        done = until_cancelled(rt.store, alice, marked, asked, "the /approve turn")
        alice_runs.join(60)
        assert not alice_runs.is_alive()
        assert not alive(alice_pid), "the approved command still runs after /stop"  # 600 s
        assert done.reply == "Stopped."
        assert isinstance(alice_failed[0], openai.APIStatusError)
        assert alice_failed[0].status_code == 409
        assert len(llm.requests) == asked_model  # the model was not asked after the stop

        note = "stopped with /stop: the command was ended in the sandbox"
        held = rt.store.held.get(alice, 1)
        assert held is not None and held.status == "done"
        assert note in (held.output or "") and "stdout:\nbegun" in (held.output or "")
        told = [m.message.content for m in rt.store.messages.for_session(alice, done.session_id)
                if m.message.role == "user"]
        assert any(note in text and "ended by the user's /stop" in text for text in told), told

        assert alive(bob_pid), "alice's /stop ended bob's command"
        assert rt.store.held.get(bob, 1).status == "running"
        assert ask(client, "/stop", "bob").startswith("Stopping:")
        bob_runs.join(60)
        assert not bob_runs.is_alive() and not alive(bob_pid)
