"""End to end over real HTTP: the openai client → the emulator → litellm → a scripted model
that starts a ten-minute terminal command; /stop ends the command in the workspace and the turn
within seconds, not at the command's timeout."""

import asyncio
import threading
import time

import openai
import pytest

from iris_testing.llm_server import ScriptedLLM
from tests.core.acting.support import until_cancelled, until_found
from tests.fakes.stack import emulator_stack
from tests.sandboxes.conftest import alive

LONG = "echo begun; echo $$ > pid && mv pid began && exec sleep 600"


@pytest.fixture
def llm():
    return ScriptedLLM()


def test_stop_ends_a_long_terminal_command_and_the_turn(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch, IRIS_SANDBOX_ISOLATION="none") as stack:
        client, rt = stack.client, stack.runtime
        llm.tool_call("terminal", {"command": LONG, "timeout": 300}).reply("Never said.")
        failed: list[Exception] = []

        def ask_long():
            try:
                client.chat.completions.create(
                    model="iris", messages=[{"role": "user", "content": "wait ten minutes"}],
                    user="alice")
            except Exception as exc:  # the waiting request ends when the turn is stopped
                failed.append(exc)

        running = threading.Thread(target=ask_long)
        running.start()
        began = asyncio.run(until_found(rt.settings.home / "workspaces", "began"))
        pid = int(began.read_text())
        assert alive(pid)

        asked = time.monotonic()
        stop = client.chat.completions.create(
            model="iris", messages=[{"role": "user", "content": "/stop"}], user="alice")
        assert stop.choices[0].message.content.startswith("Stopping:")
        alice = rt.store.users.resolve("http:alice")
        entry = rt.store.db.one("SELECT id FROM inbox WHERE user_id = ? ORDER BY id LIMIT 1",
                                (alice,))
        done = until_cancelled(rt.store, alice, entry["id"], asked, "the turn")
        running.join(60)
        assert not running.is_alive()
        assert not alive(pid), "the command still runs after /stop"  # it sleeps 600 s
        assert done.reply == "Stopped."
        assert len(llm.requests) == 1  # the model was not asked again after the stop
        tools = [m.message.content for m in rt.store.messages.for_session(alice, done.session_id)
                 if m.message.role == "tool"]
        assert len(tools) == 1 and "stdout:\nbegun" in tools[0], tools
        assert "stopped with /stop: the command was ended in the sandbox" in tools[0]
        assert isinstance(failed[0], openai.APIStatusError) and failed[0].status_code == 409
