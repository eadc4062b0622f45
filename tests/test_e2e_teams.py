"""Team notes end to end over real HTTP (openai client → emulator → litellm → scripted model):
Bob owns the team and adds Ada and Carol by account in chat; Ada (a member) has the model write a
team note, held for an admin; Bob approves it; Carol's next prompt carries it with Ada named as
the writer, Dan's (no member) does not; Ada leaves and her very next turn, in the same session,
no longer carries it."""

from __future__ import annotations

from collections import deque

import pytest

from iris_testing.llm_server import ScriptedLLM, ToolCall, ToolCalls
from tests.fakes.stack import emulator_stack

FACT = "The staging database listens on port 6543."


class Script:
    """Iris' turns answered in order; every request body kept with the user it was for."""

    def __init__(self) -> None:
        self.turns: deque[object] = deque()
        self.prompts: list[str] = []

    def __call__(self, body: dict) -> object:
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        if not system.startswith("You are Iris"):
            return "NOTHING"
        self.prompts.append(system)
        return self.turns.popleft() if self.turns else "ok"


@pytest.fixture
def script():
    return Script()


@pytest.fixture
def stack(script, monkeypatch):
    llm = ScriptedLLM()
    llm.handler = script
    with emulator_stack(
        llm,
        monkeypatch,
        IRIS_SESSION_TITLES="false",
        IRIS_MEMORY_REVIEW_EVERY="0",
        IRIS_MEMORY_REVIEW_AT_SESSION_END="false",
    ) as running:
        yield running.client, running.runtime


def say(client, who: str, text: str) -> str:
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=who
    )
    return answer.choices[0].message.content


def prompt_of(client, script: Script, who: str) -> str:
    seen = len(script.prompts)
    say(client, who, "Where is the staging database?")
    assert len(script.prompts) == seen + 1
    return script.prompts[-1]


def test_a_members_note_is_approved_shared_and_lost_on_leaving(stack, script):
    client, rt = stack
    assert "Team eng created" in say(client, "bob", "/team create eng")
    assert "joined eng as member" in say(client, "bob", "/team add eng http:ada")
    assert "joined eng as member" in say(client, "bob", "/team add eng http:carol")
    refused = say(client, "carol", "/team add eng http:dan")
    assert refused.startswith("Nothing changed") and "needs a team admin" in refused

    script.turns.extend(
        [
            ToolCalls((ToolCall("memory", {"action": "add", "target": "team", "content": FACT}),)),
            "Noted for the team.",
        ]
    )
    assert say(client, "ada", "Tell the team: staging DB is on 6543") == "Noted for the team."
    store = rt.store
    ada = store.users.resolve("http:ada")
    team = store.teams.find(ada, "eng")
    [held] = store.team_notes.pending(store.users.resolve("http:bob"), team.id)
    assert (held.content, held.author) == (FACT, ada)
    assert "not a team admin" in held.reason
    assert FACT not in prompt_of(client, script, "carol")  # held: nobody sees it yet

    assert "needs a team admin" in say(client, "carol", f"/team approve eng {held.id}")
    assert FACT not in say(client, "carol", "/team notes eng")
    assert f"Note {held.id} is now one of eng's notes" in say(
        client, "bob", f"/team approve eng {held.id}"
    )

    assert say(client, "carol", "/new") == "Started a new session."
    assert f"- [http:ada] {FACT}" in prompt_of(client, script, "carol")
    assert FACT not in prompt_of(client, script, "dan")
    nosy = say(client, "dan", "/team notes eng")
    assert nosy.startswith("Nothing changed") and FACT not in nosy

    assert say(client, "ada", "/new") == "Started a new session."
    assert FACT in prompt_of(client, script, "ada")
    assert "You left eng" in say(client, "ada", "/team leave eng")
    assert FACT not in prompt_of(client, script, "ada")  # same session, at once
    assert FACT in prompt_of(client, script, "carol")
