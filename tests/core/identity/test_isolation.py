"""Two people, their private chats and a group chat they share: nobody's private memory,
archive or sessions reach the other, and the group has its own scope."""

import pytest

from functions.webhooks import group_owner
from iris_testing.scripted_model import call, tool_calls
from tests.core.identity.helpers import deliver, message


@pytest.fixture
def rt(runtime):
    runtime.settings = runtime.settings.model_copy(
        update={"telegram_access": "allowlist", "telegram_allow": ["1", "2"]})
    return runtime


def in_group(rt, account, text):
    msg = message(account, text, chat="-100", group=True)
    return deliver(rt, msg, owner=group_owner(rt, msg, "-100", "Team"))


def tool_results(request):
    return [m.content for m in request if m.role == "tool"]


def test_group_chat_has_its_own_scope(rt, scripted):
    scripted.then(
        tool_calls(call("memory", action="add", target="user", content="Ann's salary is 90k.")),
        "noted",
        tool_calls(call("memory", action="add", content="Ann's old password hint: cat name.")),
        "ok",
        tool_calls(call("memory", action="remove", old_text="password hint")), "ok",
    )
    _, ann = deliver(rt, message("telegram:1", "remember my salary is 90k"))
    deliver(rt, message("telegram:1", "note my hint"))
    deliver(rt, message("telegram:1", "forget the hint"))

    scripted.then(
        tool_calls(call("memory", action="add", content="Team standup is at 10:00.")), "ok",
    )
    _, group_turn = in_group(rt, "telegram:1", "remember: standup at 10")
    group = group_turn.user_id
    assert group != ann.user_id and rt.store.users.get(group).kind == "group"
    assert [e.content for e in rt.store.memory.entries(group)] == ["Team standup is at 10:00."]
    assert "salary" not in scripted.requests[-2][0].content

    assert in_group(rt, "telegram:1", "/new")[1].reply == "Started a new session."
    scripted.then(
        tool_calls(
            call("session_search", query="salary password hint"),
            call("memory", action="remove", old_text="salary", target="user"),
            call("session_info"),
        ),
        "I don't know that.",
    )
    _, bob_in_group = in_group(rt, "telegram:2", "what is Ann's salary?")
    assert bob_in_group.user_id == group
    request = scripted.requests[-1]
    assert "Team standup is at 10:00." in request[0].content
    assert "salary is 90k" not in request[0].content
    results = tool_results(request)
    assert all("90k" not in r and "cat name" not in r for r in results), results
    assert results[1].startswith("Error: no user entry contains 'salary'")
    assert ann.session_id not in results[2]

    scripted.then("hi Bob")
    _, bob = deliver(rt, message("telegram:2", "hello"))
    private = scripted.requests[-1][0].content
    assert "90k" not in private and "standup" not in private
    assert bob.user_id not in (ann.user_id, group)
    assert [e.content for e in rt.store.memory.entries(ann.user_id)] == ["Ann's salary is 90k."]
    assert rt.store.memory.list_archive(bob.user_id) == []
    assert rt.store.memory.search_archive(group, "password hint") == []
    assert {s.id for s in rt.store.sessions.list(bob.user_id)}.isdisjoint(
        s.id for s in rt.store.sessions.list(ann.user_id))
