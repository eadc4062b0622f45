"""Skills end to end over real HTTP: the openai client → the emulator (uvicorn) → litellm → the
scripted model server. A busy task makes the post-turn review create a skill; a later similar
task in a new session finds it in the prompt's skill index; the model patches it; `iris skills
rollback` restores the first version."""

from __future__ import annotations

import shutil
from collections import deque
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.skills.importer import import_skills
from core.skills.library import SkillLibrary
from iris_testing.llm_server import ScriptedLLM, ToolCall, ToolCalls
from iris_testing.waiting import wait_until
from local_dev.cli import cli
from tests.fakes.stack import emulator_stack

CORPUS = Path(__file__).resolve().parent.parent / "bench" / "data" / "skills" / "library"

WORLD_CLOCK = """---
name: world-clock
description: Tells the current local time in several cities at once, one clock tool call per \
IANA timezone. Use when the user asks what time it is in two or more cities or countries.
---

# World clock

1. Map every city to its IANA timezone (Tokyo -> Asia/Tokyo).
2. Call the clock tool once per timezone, all in one step.
3. Answer one line per city: `City: HH:MM (weekday)`.
"""
PATCH_OLD = "2. Call the clock tool once per timezone, all in one step."
PATCH_NEW = (
    "2. Call the clock tool once per timezone, all in one step.\n"
    "   Cities in the same zone share one call (Lima and Bogota: America/Lima)."
)
CITIES = ("Asia/Tokyo", "Europe/Paris", "America/New_York", "Australia/Sydney", "Africa/Cairo")


class Script:
    """Answers by kind of request: Iris' turns, the skill review, anything else."""

    def __init__(self) -> None:
        self.turns: deque[object] = deque()
        self.reviews: deque[object] = deque()
        self.seen: list[tuple[str, dict]] = []

    def __call__(self, body: dict) -> object:
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        if system.startswith("You are Iris"):
            kind, queue = "turn", self.turns
        elif system.startswith("You maintain the skill library"):
            kind, queue = "review", self.reviews
        else:
            kind, queue = "other", deque(["NOTHING"])
        self.seen.append((kind, body))
        if not queue:
            raise AssertionError(f"no scripted answer for a {kind} request")
        return queue.popleft()

    def of(self, kind: str) -> list[dict]:
        return [body for k, body in self.seen if k == kind]


def calls(*pairs: tuple[str, dict]) -> ToolCalls:
    return ToolCalls(tuple(ToolCall(name, args) for name, args in pairs))


@pytest.fixture
def script():
    return Script()


@pytest.fixture
def stack(script, monkeypatch):
    llm = ScriptedLLM()
    llm.handler = script
    with emulator_stack(
        llm, monkeypatch, IRIS_SESSION_TITLES="false", IRIS_MEMORY_REVIEW_EVERY="0",
        IRIS_MEMORY_REVIEW_AT_SESSION_END="false",
    ) as running:
        yield running.client, running.runtime


def ask(client, text: str) -> str:
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user="alice")
    return answer.choices[0].message.content


def wait_for(check):
    def found():
        value = check()
        return None if value is None else (value,)

    return wait_until(found, "the post-turn review")[0]


def index_of(body: dict) -> str:
    system = body["messages"][0]["content"]
    return system[system.index("## Skills"):]


def test_learn_find_patch_and_roll_back_a_skill(stack, script, tmp_path):
    client, rt = stack
    library = SkillLibrary(rt.store, rt.settings)
    user = rt.store.users.for_account("http:alice")
    for skill_dir in sorted(CORPUS.iterdir())[:60]:  # enough that the index must choose
        shutil.copytree(skill_dir, tmp_path / "library" / skill_dir.name)
    imported = import_skills(library, user, str(tmp_path / "library"))
    assert len(imported.loaded) == 60 and not imported.refused

    script.turns.extend([
        calls(*[("clock", {"timezone": zone}) for zone in CITIES]),
        "Tokyo 09:00, Paris 02:00, New York 20:00, Sydney 11:00, Cairo 03:00.",
    ])
    script.reviews.extend([
        calls(("skill_manage", {"action": "create", "name": "world-clock",
                                "content": WORLD_CLOCK})),
        "Created world-clock.",
    ])
    reply = ask(client, "What time is it in Tokyo, Paris, New York, Sydney and Cairo?")
    assert reply.startswith("Tokyo 09:00")
    wait_for(lambda: True if len(script.of("review")) == 2 else None)
    created = wait_for(lambda: library.find(user, "world-clock"))
    assert (created.version, created.origin, created.provenance) == (1, "agent", "agent")
    first_review = script.of("review")[0]
    assert "TOOL CALL clock" in first_review["messages"][1]["content"]
    assert "world-clock" not in index_of(script.of("turn")[0])

    assert ask(client, "/new") == "Started a new session."
    script.turns.extend([
        calls(("skill_view", {"name": "world-clock"})),
        calls(("skill_manage", {"action": "patch", "name": "world-clock",
                                "old_string": PATCH_OLD, "new_string": PATCH_NEW})),
        "Berlin 02:00, Lima 20:00, Seoul 09:00. I noted the shared-zone trick in the skill.",
    ])
    reply = ask(client, "What's the time right now in Berlin, Lima and Seoul?")
    assert reply.startswith("Berlin 02:00")
    second_session = script.of("turn")[2]
    index = index_of(second_session)
    assert "- world-clock: Tells the current local time in several cities" in index
    assert f"of {len(library.entries(user))} skills" in index
    viewed, patched = (body["messages"][-1]["content"] for body in script.of("turn")[3:5])
    assert viewed.startswith("Skill world-clock (version 1, written by Iris)")
    assert patched == "Patched skill 'world-clock': now version 2."
    assert "America/Lima" in library.snapshot(user, "world-clock").text()
    assert len(script.of("review")) == 2  # three tool calls: no review this time

    result = CliRunner().invoke(cli, ["skills", "rollback", "world-clock", "--user",
                                      "http:alice"])
    assert result.exit_code == 0, result.output
    assert "version 3 restores" in result.output
    assert library.snapshot(user, "world-clock").text() == WORLD_CLOCK
    history = [(v.version, v.action, v.provenance) for v in library.versions(user, "world-clock")]
    assert history == [(1, "create", "agent"), (2, "patch", "agent"), (3, "rollback", "user")]
