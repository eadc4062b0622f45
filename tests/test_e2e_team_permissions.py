"""The team permission matrix through the HTTP chat API (openai client → emulator): owner,
admin, member, former member and non-member, each × read the team notes, write one, approve a
held one, and see another member's private memory. The whole matrix is compared at once, so a
single wrong cell fails it."""

from __future__ import annotations

import pytest

from iris_testing.llm_server import ScriptedLLM
from tests.fakes.stack import emulator_stack

ROLES = ("owner", "admin", "member", "former", "stranger")
SHARED = "Release freeze starts on the 20th."
PRIVATE = "Owner prefers green tea at standups."


@pytest.fixture
def stack(monkeypatch):
    llm = ScriptedLLM()
    prompts: list[str] = []

    def handler(body: dict) -> str:
        system = body["messages"][0]["content"]
        if system.startswith("You are Iris"):
            prompts.append(system)
        return "ok"

    llm.handler = handler
    with emulator_stack(
        llm,
        monkeypatch,
        IRIS_SESSION_TITLES="false",
        IRIS_MEMORY_REVIEW_EVERY="0",
        IRIS_MEMORY_REVIEW_AT_SESSION_END="false",
    ) as running:
        yield running.client, running.runtime, prompts


def say(client, who: str, text: str) -> str:
    answer = client.chat.completions.create(
        model="iris", messages=[{"role": "user", "content": text}], user=who
    )
    return answer.choices[0].message.content


def test_permission_matrix(stack):
    client, rt, prompts = stack
    say(client, "owner", "/team create eng")
    say(client, "owner", "/team add eng http:admin admin")
    for who in ("member", "former"):
        say(client, "admin", f"/team add eng http:{who}")
    say(client, "owner", f"/remember {PRIVATE}")  # private profile
    say(client, "owner", f"/remember team eng: {SHARED}")
    say(client, "admin", "/team remove eng http:former")
    owner = rt.store.users.resolve("http:owner")
    team = rt.store.teams.find(owner, "eng")

    actual: dict[str, dict[str, object]] = {}
    for role in ROLES:
        cells: dict[str, object] = {}
        cells["read"] = SHARED in say(client, role, "/team notes eng")
        wrote = say(client, role, f"/remember team eng: {role} wrote this.")
        cells["write"] = (
            "live"
            if "saved to eng" in wrote
            else "held"
            if "held for a eng admin" in wrote
            else "refused"
        )
        pending = rt.store.team_notes.propose(owner, team.id, f"for {role} to approve", "test")
        approved = say(client, role, f"/team approve eng {pending.id}")
        cells["approve"] = "is now one of eng's notes" in approved
        memory = say(client, role, "/memory")
        seen = len(prompts)
        say(client, role, "anything new?")
        assert len(prompts) == seen + 1
        cells["in prompt"] = SHARED in prompts[-1]
        cells["sees private"] = role != "owner" and (PRIVATE in memory or PRIVATE in prompts[-1])
        actual[role] = cells

    def row(read: bool, write: str, approve: bool) -> dict[str, object]:
        return {
            "read": read,
            "write": write,
            "approve": approve,
            "in prompt": read,
            "sees private": False,
        }

    assert actual == {
        "owner": row(True, "live", True),
        "admin": row(True, "live", True),
        "member": row(True, "held", False),
        "former": row(False, "refused", False),
        "stranger": row(False, "refused", False),
    }
