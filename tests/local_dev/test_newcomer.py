"""The first hour with the demo model, as a newcomer meets it: the real `iris run` (the emulator,
the real embedded model server on gpt4all + SmolLM2, the terminal chat) in a fresh IRIS_HOME,
driven through its prompt. `/remember` → `/new` → `/memory` shows the fact and the next
prompt carries it; `/cron` with no jobs names `/cron add`; the session is titled by its first
words; the terminal user is the owner."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.config import load_settings
from core.store import open_store
from iris_testing.server import free_port
from iris_testing.waiting import wait_until
from tests.local_dev.test_model_server import _real_model
from tests.local_dev.test_no_orphans import Output

ROOT = Path(__file__).resolve().parents[2]
PROMPT, ANSWER = "you › ", "iris › "

pytestmark = pytest.mark.timeout(600)  # the model server loads a real model on a busy machine


class Chat:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process, self.out = process, Output(process)

    def say(self, text: str) -> str:
        """Type ``text`` at the prompt; Iris' answer, once the next prompt is shown."""
        start = len(self.out.text)
        assert self.process.stdin is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        wait_until(lambda: ANSWER in self.out.text[start:]
                   and PROMPT in self.out.text[start:].split(ANSWER, 1)[1],
                   f"an answer to {text!r}", timeout=300, seen=lambda: self.out.text[start:])
        return self.out.text[start:].split(ANSWER, 1)[1].rsplit(PROMPT, 1)[0].strip()


def test_a_newcomer_sees_memory_schedules_and_sessions_with_the_demo_model(iris_home):
    _real_model()  # skips where the demo model is not installed (fails under IRIS_REQUIRE_…)
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRIS_")}
    env.update({"IRIS_HOME": str(iris_home), "PYTHONPATH": str(ROOT),
                "IRIS_SANDBOX_ISOLATION": "none", "USER": "newcomer"})
    run = subprocess.Popen(
        [sys.executable, "-m", "local_dev.cli", "run", "--port", str(free_port())], env=env,
        cwd=ROOT, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True)
    chat = Chat(run)
    try:
        wait_until(lambda: PROMPT in chat.out.text, "the chat prompt", timeout=300)
        welcome = chat.out.text
        assert "/remember I live in Lisbon" in welcome and "/cron add" in welcome

        jobs = chat.say("/cron")
        assert "No scheduled jobs" in jobs and "/cron add" in jobs
        assert "cannot schedule by itself" in jobs

        assert chat.say("/remember I live in Lisbon").startswith("Added to user.")
        assert chat.say("/new") == "Started a new session."
        shown = chat.say("/memory")
        assert "1. [user] I live in Lisbon" in shown and "/remember" in shown
        assert chat.say("where do I live?")  # the demo model answers something

        assert chat.say("/model openai/gpt-4o-mini") == (
            "Switched your model to openai/gpt-4o-mini.")  # the terminal's user owns it
        assert chat.say("/model default").startswith("Back to the default model")
        assert run.stdin is not None
        run.stdin.write("/exit\n")
        run.stdin.flush()
        assert run.wait(timeout=120) == 0, chat.out.text
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()

    settings = load_settings({"IRIS_HOME": str(iris_home)})
    store = open_store(settings)
    try:
        user_id = store.users.resolve("http:newcomer")
        (latest, *_older) = store.sessions.list(user_id)
        assert latest.platform == "terminal"
        assert "I live in Lisbon" in (latest.system_prompt or "")  # the demo prompt carries it
        assert latest.title == "where do I live?"
    finally:
        store.close()
