"""The team permission matrix through the HTTP chat API (openai client → emulator): owner,
admin, member, former member and non-member, each × read the team notes, write one, approve a
held one, and see another member's private memory. The whole matrix is compared at once, so a
single wrong cell fails it."""

from __future__ import annotations

import json

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


# -- the team skill library, through the HTTP chat API and the Telegram webhook -----------------

TG_IDS = {"owner": 101, "admin": 102, "member": 103, "former": 104, "stranger": 105}
TG_SECRET = "team-skills-secret"
MARK = "CHECKLIST-STEP-7Q"


def skill_md(name: str, body: str) -> bytes:
    return (
        f"---\nname: {name}\ndescription: {name.replace('-', ' ')} for releases; use when "
        f"someone asks about {name}.\n---\n\n# {name}\n\n1. {body}\n"
    ).encode()


@pytest.fixture(params=["http", "telegram"])
def entry(request, monkeypatch):
    """``(ask, account, runtime, requests)``: ``ask(role, text)`` says ``text`` as ``role``
    through the entry point and returns Iris' reply; ``requests`` are the model's requests."""
    import httpx

    from iris_testing.server import serve
    from iris_testing.telegram_api import FakeTelegram
    from iris_testing.waiting import wait_until

    llm, telegram = ScriptedLLM(), FakeTelegram()
    requests: list[str] = []

    def handler(body: dict) -> str:
        if body["messages"][0]["content"].startswith("You are Iris"):
            requests.append(json.dumps(body))
        return "ok"

    llm.handler = handler
    with (
        serve(telegram.app) as bot,
        emulator_stack(
            llm,
            monkeypatch,
            IRIS_SESSION_TITLES="false",
            IRIS_MEMORY_REVIEW_EVERY="0",
            IRIS_MEMORY_REVIEW_AT_SESSION_END="false",
            IRIS_TELEGRAM_TOKEN="7000001:test-token",
            IRIS_TELEGRAM_SECRET=TG_SECRET,
            IRIS_TELEGRAM_API_BASE=bot.url,
            IRIS_TELEGRAM_ACCESS="open",
        ) as running,
        httpx.Client(base_url=running.url, timeout=60) as http,
    ):
        if request.param == "http":

            def ask(role: str, text: str) -> str:
                return say(running.client, role, text)

            def account(role: str) -> str:
                return f"http:{role}"
        else:

            def ask(role: str, text: str) -> str:
                chat = TG_IDS[role]
                before = len(telegram.sent_messages(chat))
                update = telegram.make_update(text, user_id=chat)
                answer = http.post(
                    "/telegram/webhook",
                    json=update,
                    headers={"X-Telegram-Bot-Api-Secret-Token": TG_SECRET},
                )
                assert answer.status_code == 200, answer.text
                new = wait_until(
                    lambda: telegram.sent_messages(chat)[before:], f"{role}'s answer to {text!r}"
                )
                return "\n".join(m["text"] for m in new)

            def account(role: str) -> str:
                return f"telegram:{TG_IDS[role]}"

        yield ask, account, running.runtime, requests


def test_skill_permission_matrix(entry):
    from core.skills.library import Change, SkillLibrary
    from core.store.team_skills import Proposal

    ask, account, rt, requests = entry
    store = rt.store
    library = SkillLibrary(store, rt.settings)

    def own_skill(role: str, name: str, body: str) -> None:
        user = store.users.for_account(account(role))
        library.apply(
            user,
            name,
            lambda _: Change(
                provenance="user", action="create", replace_all=True,
                write={"SKILL.md": skill_md(name, body)},
            ),
        )  # fmt: skip

    for role in ROLES:
        own_skill(role, f"{role}-tip", f"{role}'s tip.")
    own_skill("owner", "release-checklist", f"Freeze the branch ({MARK}).")
    own_skill("owner", "owner-private-diary", "Write the owner's diary.")

    assert "created" in ask("owner", "/team create eng")
    assert "joined" in ask("owner", f"/team add eng {account('admin')} admin")
    for role in ("member", "former"):
        assert "joined" in ask("admin", f"/team add eng {account(role)}")
    assert "proposed to eng" in ask("owner", "/skills share release-checklist eng")
    assert "is now offered" in ask("owner", "/team approve eng release-checklist")
    assert "was removed" in ask("admin", f"/team remove eng {account('former')}")
    owner = store.users.resolve(account("owner"))
    team = store.teams.find(owner, "eng")

    actual: dict[str, dict[str, object]] = {}
    for role in ROLES:
        cells: dict[str, object] = {}
        cells["propose"] = "proposed to eng" in ask(role, f"/skills share {role}-tip eng")
        text = skill_md(f"for-{role}", "Approve me.").decode()
        store.team_skills.propose(owner, team.id, Proposal(
            name=f"for-{role}", description="x", tags=(), category=None, search_text="",
            files={"SKILL.md": text}, findings=[],
        ))  # fmt: skip
        cells["approve"] = "is now offered" in ask(role, f"/team approve eng for-{role}")
        ask(role, "/new")
        listing = ask(role, "/skills")
        seen = len(requests)
        ask(role, "/release-checklist run it")  # not a command for whom it is no skill
        cells["use"] = len(requests) == seen + 1 and MARK in requests[-1]
        seen = len(requests)
        ask(role, "What is left before the release freeze?")
        assert len(requests) == seen + 1
        cells["routed"] = "- release-checklist:" in requests[-1]
        cells["sees private"] = role != "owner" and (
            "owner-private-diary" in listing or "owner-private-diary" in requests[-1]
        )
        actual[role] = cells

    def row(member: bool, admin: bool) -> dict[str, object]:
        return {
            "propose": member,
            "approve": admin,
            "use": member,
            "routed": member,
            "sees private": False,
        }

    assert actual == {
        "owner": row(True, True),
        "admin": row(True, True),
        "member": row(True, False),
        "former": row(False, False),
        "stranger": row(False, False),
    }
