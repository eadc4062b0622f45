"""Teams at the store layer: every read and write is checked against the actor's membership and
role (runs on both backends)."""

from __future__ import annotations

import pytest

from core.errors import IrisUsageError, NotFound
from core.store.teams import NotAMember, NotPermitted

pytestmark = pytest.mark.both_backends


@pytest.fixture
def people(store):
    return {name: store.users.for_account(f"http:{name}") for name in ("owen", "bob", "ada", "dan")}


@pytest.fixture
def team(store, people):
    team = store.teams.create(people["owen"], "eng")
    store.teams.add(people["owen"], team.id, people["bob"], "admin")
    store.teams.add(people["bob"], team.id, people["ada"])
    return team


def test_roles_and_membership_are_enforced(store, people, team):
    p = people
    assert store.teams.role_of(team.id, p["owen"]) == "owner"
    assert [m.role for m in store.teams.members(p["ada"], team.id)] == ["owner", "admin", "member"]
    with pytest.raises(NotAMember):
        store.teams.members(p["dan"], team.id)
    with pytest.raises(NotAMember):
        store.teams.find(p["dan"], "eng")
    with pytest.raises(NotPermitted):
        store.teams.add(p["ada"], team.id, p["dan"])
    with pytest.raises(NotPermitted):  # an admin cannot make an owner
        store.teams.add(p["bob"], team.id, p["dan"], "owner")
    with pytest.raises(NotPermitted):  # nor remove one
        store.teams.remove(p["bob"], team.id, p["owen"])
    with pytest.raises(NotPermitted):  # a member cannot promote themselves
        store.teams.set_role(p["ada"], team.id, p["ada"], "admin")
    with pytest.raises(IrisUsageError, match="last owner"):
        store.teams.remove(p["owen"], team.id, p["owen"])
    with pytest.raises(IrisUsageError, match="already exists"):
        store.teams.create(p["dan"], "eng")
    assert store.teams.role_of(team.id, p["dan"]) is None


def test_leaving_ends_access_and_is_audited(store, people, team):
    p = people
    store.teams.remove(p["ada"], team.id, p["ada"])
    with pytest.raises(NotAMember):
        store.team_notes.live(p["ada"], team.id)
    assert store.teams.of_user(p["ada"]) == []
    assert [t.name for t, _ in store.teams.of_user(p["bob"])] == ["eng"]
    store.teams.set_role(p["owen"], team.id, p["bob"], "member")
    actions = [(a.action, a.actor) for a in store.teams.audit(p["owen"], team.id)]
    assert actions == [
        ("role", p["owen"]),
        ("leave", p["ada"]),
        ("add", p["bob"]),
        ("add", p["owen"]),
        ("create", p["owen"]),
    ]


def test_notes_members_propose_admins_decide(store, people, team):
    p = people
    held = store.team_notes.propose(p["ada"], team.id, "deploys on Tuesdays", "not an admin")
    assert store.team_notes.live(p["ada"], team.id) == []
    with pytest.raises(NotPermitted):
        store.team_notes.pending(p["ada"], team.id)
    with pytest.raises(NotPermitted):
        store.team_notes.decide(p["ada"], team.id, held.id, True)
    with pytest.raises(NotPermitted):
        store.team_notes.publish(p["ada"], team.id, "sneaky", [])
    with pytest.raises(NotAMember):
        store.team_notes.propose(p["dan"], team.id, "x", "")
    assert [n.id for n in store.team_notes.pending(p["bob"], team.id)] == [held.id]
    store.team_notes.decide(p["bob"], team.id, held.id, True)
    live = store.team_notes.live(p["ada"], team.id)
    assert [(n.content, n.author, n.decided_by) for n in live] == [
        ("deploys on Tuesdays", p["ada"], p["bob"])
    ]
    with pytest.raises(NotFound):
        store.team_notes.decide(p["bob"], team.id, held.id, True)


def test_overflow_is_archived_searchable_and_versions_restore(store, people, team):
    p = people
    first = store.team_notes.publish(p["bob"], team.id, "staging is eu-west-1", [])
    second = store.team_notes.publish(p["bob"], team.id, "prod is us-east-1", [first.id])
    assert [n.id for n in store.team_notes.live(p["ada"], team.id)] == [second.id]
    found = store.team_notes.search_archive(p["ada"], team.id, "eu-west")
    assert [(n.id, n.reason) for n in found] == [(first.id, "overflow")]
    versions = store.team_notes.versions(p["ada"], team.id)
    assert [(v.number, v.note_ids, v.actor) for v in versions] == [
        (1, [first.id], p["bob"]),
        (2, [second.id], p["bob"]),
    ]
    with pytest.raises(NotPermitted):
        store.team_notes.restore(p["ada"], team.id, 1)
    store.team_notes.restore(p["bob"], team.id, 1)
    assert [n.id for n in store.team_notes.live(p["ada"], team.id)] == [first.id]
    assert store.team_notes.versions(p["bob"], team.id)[-1].note_ids == [first.id]
    with pytest.raises(NotAMember):
        store.team_notes.search_archive(p["dan"], team.id, "eu")
