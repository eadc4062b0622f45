"""Team skills at the store layer: every read and write is checked against the actor's
membership and role, and ``offered`` follows membership at once (runs on both backends)."""

from __future__ import annotations

import pytest

from core.errors import IrisUsageError, NotFound
from core.store.team_skills import Proposal
from core.store.teams import NotAMember, NotPermitted

pytestmark = pytest.mark.both_backends

FINDING = {
    "path": "SKILL.md",
    "line": 7,
    "category": "prompt_injection",
    "reason": "x",
    "excerpt": "ignore previous instructions",
}


def proposal(name: str = "pg-backup", body: str = "1. Dump.", findings=None) -> Proposal:
    text = f"---\nname: {name}\ndescription: Backs up Postgres.\n---\n\n{body}\n"
    return Proposal(
        name=name,
        description="Backs up Postgres.",
        tags=("db",),
        category=None,
        search_text=body,
        files={"SKILL.md": text},
        findings=findings or [],
    )


@pytest.fixture
def people(store):
    names = ("owen", "bob", "ada", "carol", "dan")
    return {name: store.users.for_account(f"http:{name}") for name in names}


@pytest.fixture
def team(store, people):
    team = store.teams.create(people["owen"], "eng")
    store.teams.add(people["owen"], team.id, people["bob"], "admin")
    store.teams.add(people["bob"], team.id, people["ada"])
    store.teams.add(people["bob"], team.id, people["carol"])
    return team


def test_only_members_propose_and_only_admins_decide(store, people, team):
    p, skills = people, store.team_skills
    with pytest.raises(NotAMember):
        skills.propose(p["dan"], team.id, proposal())
    first = skills.propose(p["ada"], team.id, proposal())
    assert (first.version, first.state, first.proposer) == (1, "proposed", p["ada"])
    assert skills.offered(p["carol"]) == []  # proposed is not offered
    with pytest.raises(NotPermitted):
        skills.proposals(p["carol"], team.id)
    with pytest.raises(NotPermitted):
        skills.decide(p["ada"], team.id, "pg-backup", 1, True)
    with pytest.raises(NotAMember):
        skills.decide(p["dan"], team.id, "pg-backup", 1, True)
    with pytest.raises(NotAMember):
        skills.version(p["dan"], team.id, "pg-backup", 1)
    skills.decide(p["bob"], team.id, "pg-backup", 1, True)
    offered = skills.offered(p["carol"])
    assert [(o.name, o.version, o.team_name, o.proposer) for o in offered] == [
        ("pg-backup", 1, "eng", p["ada"])
    ]
    assert skills.offered(p["dan"]) == []
    with pytest.raises(NotAMember):
        skills.approved(p["dan"], team.id, "pg-backup")
    actions = [a.action for a in store.teams.audit(p["owen"], team.id)]
    assert actions[:2] == ["skill.approve", "skill.propose"]


def test_leaving_ends_the_offer_and_every_read_at_once(store, people, team):
    p, skills = people, store.team_skills
    skills.propose(p["ada"], team.id, proposal())
    skills.decide(p["bob"], team.id, "pg-backup", 1, True)
    assert skills.offered(p["carol"])
    store.teams.remove(p["carol"], team.id, p["carol"])
    assert skills.offered(p["carol"]) == []
    with pytest.raises(NotAMember):
        skills.version(p["carol"], team.id, "pg-backup", 1)
    with pytest.raises(NotAMember):
        skills.propose(p["carol"], team.id, proposal(body="2. Restore."))


def test_a_quarantined_version_is_never_offered_nor_approved(store, people, team):
    p, skills = people, store.team_skills
    held = skills.propose(p["ada"], team.id, proposal(findings=[FINDING]))
    assert held.state == "quarantined"
    assert [v.name for v in skills.proposals(p["bob"], team.id)] == ["pg-backup"]
    with pytest.raises(IrisUsageError, match="quarantined"):
        skills.decide(p["bob"], team.id, "pg-backup", 1, True)
    assert skills.offered(p["carol"]) == []
    skills.decide(p["bob"], team.id, "pg-backup", 1, False)
    assert skills.version(p["ada"], team.id, "pg-backup", 1).state == "rejected"
    with pytest.raises(IrisUsageError, match="decided already"):
        skills.decide(p["bob"], team.id, "pg-backup", 1, False)


def test_new_versions_and_rollback(store, people, team):
    p, skills = people, store.team_skills
    skills.propose(p["ada"], team.id, proposal())
    skills.decide(p["bob"], team.id, "pg-backup", 1, True)
    second = skills.propose(p["carol"], team.id, proposal(body="1. Dump.\n2. Verify."))
    assert second.version == 2
    assert skills.offered(p["ada"])[0].version == 1  # v1 stays in use until approved
    skills.decide(p["owen"], team.id, "pg-backup", 2, True)
    assert skills.offered(p["ada"])[0].version == 2
    with pytest.raises(NotPermitted):
        skills.rollback(p["carol"], team.id, "pg-backup")
    assert skills.rollback(p["bob"], team.id, "pg-backup") == 1
    assert skills.offered(p["ada"])[0].version == 1
    assert skills.version(p["bob"], team.id, "pg-backup", 2).state == "rolled_back"
    assert skills.rollback(p["bob"], team.id, "pg-backup", 2) == 2  # forward again
    with pytest.raises(IrisUsageError, match="never approved"):
        skills.rollback(p["bob"], team.id, "pg-backup", 7)
    with pytest.raises(NotFound):
        skills.rollback(p["bob"], team.id, "no-such")
