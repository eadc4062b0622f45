"""/stop is answered at ingress and cancels a turn running elsewhere: over the HTTP API, and
in another process (another container) through the database flag."""

import os
import subprocess
import sys
import threading

from core.messages import Message, ToolCall
from iris_testing.crash_platform_worker import ROOT, HandOff
from iris_testing.platform_stack import platform_stack
from iris_testing.waiting import until


def test_stop_over_http_ends_the_waiting_request(iris_home):
    with platform_stack(iris_home) as stack:
        store = stack.rt.store

        async def wait_for_stop(messages):
            await until(lambda: store.db.scalar("SELECT count(*) FROM turn_cancels"),
                        "the /stop")
            return Message(role="assistant", content="", tool_calls=(
                ToolCall(id="c1", name="clock", arguments="{}"),))

        stack.model.before = wait_for_stop
        results = {}

        def ask(name, text):
            results[name] = stack.http.post(
                f"{stack.url}/v1/chat/completions", headers={"Authorization": "Bearer test-key"},
                json={"messages": [{"role": "user", "content": text}], "user": "alice"})

        running = threading.Thread(target=ask, args=("long", "work for an hour"))
        running.start()
        stack.wait(lambda: stack.model.seen)
        ask("stop", "/stop")
        running.join(30)
        stop = results["stop"].json()["choices"][0]["message"]["content"]
        assert stop == "Stopping: I'll end the current turn after the step it is on."
        long = results["long"]
        assert long.status_code == 409 and long.json()["error"]["code"] == "turn_cancelled"
        assert len(stack.model.seen) == 1


def test_stop_reaches_a_turn_running_in_another_process(iris_home):
    with platform_stack(iris_home) as stack:
        rt = stack.rt
        rt.dispatcher = HandOff()
        stack.telegram_post(stack.telegram.make_update("a long job"))
        entry = rt.store.db.one("SELECT id, user_id, chat_key FROM inbox")
        in_model = iris_home / "in-model"
        env = {**os.environ, **stack.env, "PYTHONPATH": str(ROOT),
               "IRIS_TEST_IN_MODEL": str(in_model)}
        child = subprocess.Popen(
            [sys.executable, "-m", "iris_testing.crash_platform_worker", entry["user_id"],
             entry["chat_key"], "wait_for_stop"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            stack.wait(in_model.exists, timeout=60)
            assert stack.telegram_post(stack.telegram.make_update("/stop")).status_code == 200
            _, stderr = child.communicate(timeout=60)
        finally:
            child.kill()
        assert child.returncode == 0, stderr
        done = rt.store.inbox.get(entry["user_id"], entry["id"])
        assert (done.status, done.reply) == ("cancelled", "Stopped.")
        roles = [m.message.role for m in rt.store.messages.for_session(
            entry["user_id"], done.session_id)]
        assert roles == ["user", "assistant", "tool", "assistant"]
        stack.wait(lambda: stack.telegram.sent_messages(4242))
        assert [m["text"] for m in stack.telegram.sent_messages(4242)] == [
            "Stopping: I'll end the current turn after the step it is on."]
