"""`iris chat` as a user meets it: a real `iris chat` process against the HTTP API on loopback."""

import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from click.testing import CliRunner

from core.messages import Message
from core.model.llm import ModelResponse, ToolSpec
from functions.app import create_app
from functions.dispatch import LocalDispatcher
from functions.runtime import compose
from iris_testing.scripted_model import FixedRouter, ScriptedModel, call, tool_calls
from iris_testing.server import free_port, serve
from iris_testing.signals import ignoring_sigint
from local_dev.chat import CLI_HELP, INTERRUPTED
from local_dev.cli import cli
from tests.local_dev.test_no_orphans import Output

ROOT = Path(__file__).resolve().parents[2]


class GatedModel(ScriptedModel):
    """The scripted model, whose first step waits for ``release`` (off the event loop)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.release = threading.Event()

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()
    ) -> ModelResponse:
        if not self.started.is_set():
            self.started.set()
            await asyncio.to_thread(self.release.wait, 60)
        return await super().complete(messages, tools)


def start_api(settings, store, model):
    from pydantic import SecretStr

    configured = settings.model_copy(update={"api_key": SecretStr("test-key")})
    rt = compose(configured, dispatcher=LocalDispatcher(), store=store, router=FixedRouter(model))
    return serve(create_app(rt))


def chat_process(url: str, iris_home: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRIS_")}
    env.update({"IRIS_HOME": str(iris_home), "IRIS_API_KEY": "test-key",
                "PYTHONPATH": str(ROOT)})
    return subprocess.Popen(
        ignoring_sigint([sys.executable, "-m", "local_dev.cli", "chat", "--url", url,
                         "--user", "pat"]),
        env=env, cwd=ROOT, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True,
    )


def say(process: subprocess.Popen[str], line: str) -> None:
    assert process.stdin is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()


def test_chat_against_a_stopped_emulator_says_how_to_start_one():
    url = f"http://127.0.0.1:{free_port()}"
    one = CliRunner().invoke(cli, ["chat", "-m", "hi", "--url", url])
    interactive = CliRunner().invoke(cli, ["chat", "--url", url], input="hello\n")
    for result in (one, interactive):
        assert result.exit_code == 1
        assert "cannot reach Iris" in result.output and "iris dev" in result.output


def test_help_in_the_terminal_lists_exit(settings, store, iris_home):
    model = ScriptedModel()
    with start_api(settings, store, model) as server:
        chat = chat_process(server.url, iris_home)
        out = Output(chat)
        say(chat, "/help")
        say(chat, "/exit")
        assert chat.wait(timeout=60) == 0
        out.wait(CLI_HELP)
    assert "/exit" in CLI_HELP and model.requests == []


def test_ctrl_c_stops_the_running_turn_and_the_next_message_is_answered(
    settings, store, iris_home
):
    model = GatedModel()
    model.then(tool_calls(call("clock", timezone="UTC")), "second answer")
    with start_api(settings, store, model) as server:
        chat = chat_process(server.url, iris_home)
        out = Output(chat)
        try:
            out.wait("Type a message.")  # after its SIGINT handler is in place
            say(chat, "a slow question")
            assert model.started.wait(60)
            os.killpg(chat.pid, signal.SIGINT)
            out.wait(INTERRUPTED)
            user = store.users.resolve("http:pat")
            entry_id = store.db.scalar("SELECT min(id) FROM inbox WHERE user_id = ?", (user,))
            assert store.inbox.get(user, entry_id).message.text == "a slow question"
            assert store.cancels.requested(user, entry_id)
            model.release.set()
            say(chat, "next")
            out.wait("iris › second answer")
            say(chat, "/exit")
            assert chat.wait(timeout=60) == 0
        finally:
            model.release.set()
            if chat.poll() is None:
                chat.kill()
    assert store.inbox.get(user, entry_id).status == "cancelled"
    assert len(model.requests) == 2  # the stopped turn never took its second step
    assert model.requests[-1][-1].content == "next"


def test_chat_shows_what_scheduled_jobs_delivered_while_away_once(settings, store, iris_home):
    user = store.users.for_account("http:pat")
    other = store.users.for_account("http:sam")
    for owner, text in ((user, "⏰ weather\n\nSunny, 21°C."), (other, "⏰ sam's job\n\nprivate")):
        store.deliveries.add(owner, source=f"test:{owner}", platform="inbox",
                             chat_key="cron:job_x", target={}, text=text)
    with start_api(settings, store, ScriptedModel()) as server:
        for expected in (True, False):
            chat = chat_process(server.url, iris_home)
            out = Output(chat)
            out.wait("Type a message.")
            say(chat, "/exit")
            assert chat.wait(timeout=60) == 0
            out.finish()
            assert ("While you were away" in out.text) is expected
            assert ("Sunny, 21°C." in out.text) is expected
            assert "private" not in out.text
