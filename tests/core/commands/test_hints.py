"""With a model that cannot use tools (``model_uses_tools: false``, the embedded demo's), the
model is offered none, and /memory and /cron point to the commands that do the work instead."""

import pytest

from core.config import load_settings
from tests.core.memory.test_snapshot import send


@pytest.fixture
def settings(iris_home, db_backend, monkeypatch):
    monkeypatch.setenv("IRIS_MODEL_USES_TOOLS", "false")
    return load_settings()


def test_a_model_that_cannot_use_tools_gets_none_and_the_commands_say_what_to_type(
    runtime, scripted
):
    scripted.then("Hello.")
    send(runtime, "hi", "1")
    assert scripted.tools_seen == [[]]
    memory = send(runtime, "/memory", "2").reply
    assert "/remember TEXT adds to your profile" in memory
    assert "cannot save memory itself" in memory and "IRIS_MODEL" in memory
    jobs = send(runtime, "/cron", "3").reply
    assert jobs.startswith("No scheduled jobs. Make one with /cron add SCHEDULE | PROMPT")
    assert "cannot schedule by itself" in jobs


def test_a_model_that_uses_tools_is_offered_them_and_asked_for(runtime, scripted, monkeypatch):
    runtime.settings = runtime.settings.model_copy(update={"model_uses_tools": True})
    scripted.then("Hello.")
    send(runtime, "hi", "1")
    assert "memory" in scripted.tools_seen[0]
    assert send(runtime, "/cron", "2").reply.startswith(
        "No scheduled jobs. Ask me to schedule something")
    assert "Iris saves what matters as you talk" in send(runtime, "/memory", "3").reply
