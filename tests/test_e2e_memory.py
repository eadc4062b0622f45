"""Memory end to end over real HTTP: the official openai client → the emulator (uvicorn) →
litellm → the scripted model server, which calls the `memory` tool; then what each user's
next session, tools and the admin API show."""

import httpx
import openai
import pytest

from iris_testing.llm_server import ScriptedLLM
from tests.fakes.stack import ADMIN_KEY as KEY
from tests.fakes.stack import emulator_stack


@pytest.fixture
def llm():
    return ScriptedLLM()


@pytest.fixture
def stack(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch) as running, httpx.Client(
        base_url=running.url, headers={"Authorization": f"Bearer {KEY}"}
    ) as admin:
        yield running.client, admin, running.runtime


def ask(client, text, user, **kwargs):
    answer = client.chat.completions.with_raw_response.create(
        model="iris", messages=[{"role": "user", "content": text}], user=user, **kwargs)
    return answer.parse(), answer.headers.get("x-iris-session")


def system_prompt(llm):
    first = llm.requests[-1]["messages"][0]
    assert first["role"] == "system"
    return first["content"]


def test_a_fact_told_in_one_session_is_in_the_next_sessions_prompt_for_that_user_only(
    stack, llm
):
    client, _, _ = stack
    llm.tool_call("memory", {"action": "add", "target": "user",
                             "content": "Alice is allergic to peanuts."})
    llm.reply("Noted: no peanuts for you.")
    reply, first_session = ask(client, "I'm allergic to peanuts, remember that", "alice")
    assert reply.choices[0].message.content == "Noted: no peanuts for you."
    tool_result = llm.requests[1]["messages"][-1]
    assert tool_result["role"] == "tool" and tool_result["content"].startswith("Added to user.")
    assert "peanuts" not in system_prompt(llm)

    llm.reply("Pasta?")
    ask(client, "what should I cook?", "alice")
    assert "peanuts" not in system_prompt(llm)  # frozen for the rest of the session

    reply, _ = ask(client, "/new", "alice")
    assert reply.choices[0].message.content == "Started a new session."
    llm.reply("A peanut-free stir-fry.")
    _, second_session = ask(client, "what should I cook?", "alice")
    assert second_session != first_session
    prompt = system_prompt(llm)
    assert "USER PROFILE [2% — 29/1,375 chars]\n[user] Alice is allergic to peanuts." in prompt

    llm.reply("How about tacos?")
    ask(client, "what should I cook?", "bob")
    assert "peanuts" not in system_prompt(llm)
    assert "USER PROFILE [0% — 0/1,375 chars]\n(empty)" in system_prompt(llm)


def test_bob_never_sees_alices_memory_archive_or_sessions(stack, llm):
    client, admin, rt = stack
    llm.tool_calls([
        ("memory", {"action": "add", "content": "Project Falcon ships on May 3."}),
        ("memory", {"action": "add", "content": "Falcon staging runs on host kestrel-7."}),
    ]).reply("ok")
    llm.tool_call("memory", {"action": "remove", "old_text": "kestrel-7"}).reply("removed")
    _, alice_session = ask(client, "remember the Falcon facts", "alice")
    ask(client, "forget the staging host", "alice")

    llm.tool_calls([
        ("session_search", {"query": "Falcon staging kestrel"}),
        ("memory", {"action": "remove", "old_text": "Falcon"}),
        ("memory", {"action": "replace", "old_text": "May 3", "content": "Falcon is cancelled."}),
        ("session_info", {}),
    ]).reply("nothing found")
    ask(client, "/new", "bob")
    ask(client, "what do you know about Falcon?", "bob")
    bob_request = llm.requests[-1]
    results = [m["content"] for m in bob_request["messages"] if m["role"] == "tool"]
    assert len(results) == 4
    assert all("ships on" not in r and "staging runs" not in r for r in results), results
    assert results[1].startswith("Error: no memory entry contains 'Falcon'")
    assert results[2].startswith("Error: no memory entry contains 'May 3'")
    assert alice_session not in results[3]
    assert all("Falcon" not in m["content"] for m in bob_request["messages"]
               if m["role"] == "system")

    alice = rt.store.users.resolve("http:alice")
    assert [e.content for e in rt.store.memory.entries(alice)] == ["Project Falcon ships on May 3."]

    for path in ("/api/users/bob/memory", "/api/users/bob/memory/archive",
                 "/api/users/bob/memory/archive?q=kestrel"):
        body = admin.get(path)
        assert body.status_code == 200 and "Falcon" not in body.text and "kestrel" not in body.text
    hits = admin.get("/api/users/bob/sessions/search", params={"q": "Falcon"})
    assert hits.status_code == 200 and alice_session not in hits.text
    assert "kestrel" in admin.get("/api/users/alice/memory/archive?q=kestrel").text

    with pytest.raises(openai.NotFoundError):
        ask(client, "show me that session", "bob", extra_headers={"X-Iris-Session": alice_session})
