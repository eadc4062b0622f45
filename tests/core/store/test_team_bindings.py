"""Places bound to a team at the store layer (both backends): binding needs an admin; writing in
a bound place joins once; a Slack workspace is a place; who left or was removed is not pulled
back; other places join nothing."""

from __future__ import annotations

import pytest

from core.messages import Usage
from core.store.team_bindings import workspace_place
from core.store.teams import NotAMember, NotPermitted
from core.teams.binding import join_where_written

pytestmark = pytest.mark.both_backends


@pytest.fixture
def people(store):
    names = ("owen", "ada", "dan", "eve")
    return {name: store.users.for_account(f"http:{name}") for name in names}


@pytest.fixture
def team(store, people):
    team = store.teams.create(people["owen"], "eng")
    store.teams.add(people["owen"], team.id, people["ada"])
    return team


def test_binding_needs_an_admin_and_joining_happens_once(store, people, team):
    group = store.users.for_account("telegram:group:-100", kind="group")
    with pytest.raises(NotPermitted):
        store.team_bindings.bind(people["ada"], team.id, group, "group G")
    with pytest.raises(NotAMember):
        store.team_bindings.bind(people["dan"], team.id, group, "group G")
    assert store.team_bindings.join_from(people["dan"], [group]) == []  # nothing bound yet
    store.team_bindings.bind(people["owen"], team.id, group, "group G")
    assert [b.label for b in store.team_bindings.of_team(people["ada"], team.id)] == ["group G"]
    assert store.team_bindings.join_from(people["dan"], ["grp_elsewhere"]) == []
    assert store.team_bindings.join_from(people["dan"], [group]) == ["eng"]
    assert store.team_bindings.join_from(people["dan"], [group]) == []  # already a member
    assert store.teams.role_of(team.id, people["dan"]) == "member"

    store.teams.remove(people["dan"], team.id, people["dan"])  # leaves
    store.teams.remove(people["owen"], team.id, people["ada"])  # is removed
    for who in ("dan", "ada"):
        assert store.team_bindings.join_from(people[who], [group]) == [], who
        assert store.teams.role_of(team.id, people[who]) is None, who

    store.team_bindings.unbind(people["owen"], team.id, group)
    assert store.team_bindings.join_from(people["eve"], [group]) == []


def test_a_slack_workspace_is_a_place(store, people, team):
    assert workspace_place("slack:T1/U9") == "slack-workspace:T1"
    assert workspace_place("telegram:42") is None
    store.team_bindings.bind(people["owen"], team.id, "slack-workspace:T1", "Slack workspace T1")
    alice = store.users.for_account("slack:T1/U9")
    bob = store.users.for_account("slack:T2/U9")
    direct = store.users.for_account("slack:T1/U9")  # a direct message: the person's own scope
    assert join_where_written(store, direct, "person", "slack:T2/U9") == []
    assert store.teams.role_of(team.id, bob) is None
    assert join_where_written(store, direct, "person", "slack:T1/U9") == ["eng"]
    assert store.teams.role_of(team.id, alice) == "member"


def test_team_usage_counts_its_bound_group_chats_only(store, people, team):
    group = store.users.for_account("telegram:group:-100", kind="group")
    other_group = store.users.for_account("telegram:group:-200", kind="group")
    store.team_bindings.bind(people["owen"], team.id, group, "group G")
    store.team_bindings.bind(people["owen"], team.id, "slack-workspace:T1", "Slack workspace T1")
    since = store.clock.now()
    for scope, tokens in ((group, 100), (group, 20), (people["ada"], 5_000),
                          (other_group, 7_000)):
        store.usage.record(scope, Usage(model="m", prompt_tokens=tokens, completion_tokens=1,
                                        calls=1), session_id=None, inbox_id=None)
    seen = store.team_bindings.usage(people["ada"], team.id, since=since)
    assert (seen.calls, seen.prompt_tokens, seen.completion_tokens) == (2, 120, 2)
    with pytest.raises(NotAMember):
        store.team_bindings.usage(people["dan"], team.id, since=since)
