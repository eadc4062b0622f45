"""The dashboard's Team page over real HTTP: each person sees only the teams they are in, an
admin approves or rejects held notes and adds people, a member cannot (the store refuses and
nothing changes), a former member and a non-member see nothing of the team, and every form
needs the session's CSRF token and this site's origin."""

from __future__ import annotations

from contextlib import contextmanager

import httpx
import pytest

from core.messages import Usage
from core.teams import manage
from core.teams.notes import write_note
from tests.dashboard.test_http import signed_in
from tests.dashboard.test_http_new_forms import refused


@pytest.fixture
def people(dash):
    return make_eng(dash)


def make_eng(dash):
    """eng: ada owns it, bob is an admin, carol a member; dan is in no team. Carol's note
    waits for an admin; one note by ada is live."""
    store = dash.runtime.store
    ids = {name: store.users.for_account(f"http:{name}") for name in ("ada", "bob", "carol", "dan")}
    manage.create(store, ids["ada"], "eng")
    manage.add(store, ids["ada"], "eng", "http:bob", "admin")
    manage.add(store, ids["ada"], "eng", "http:carol")
    team = store.teams.find(ids["ada"], "eng")
    write_note(store, ids["ada"], team.id, "Deploys happen on Tuesdays.")
    held = write_note(store, ids["carol"], team.id, "The staging password rotates monthly.")
    assert held.held_because is not None
    return ids, team, held.note.id


@contextmanager
def session(dash, name):
    """``name`` signed in, in a client of their own: (client, user id, csrf token)."""
    with httpx.Client(base_url=dash.url, timeout=30) as client:
        yield (client, *signed_in(dash, client, name))


def post(client, dash, user_id, action, csrf, **data):
    return client.post(f"/ui/u/{user_id}/team/{action}", data={"csrf": csrf, **data},
                       headers={"origin": dash.url})


def test_each_person_sees_their_teams_and_only_admins_see_held_notes(dash, people):
    ids, team, held_id = people
    store = dash.runtime.store
    group = store.users.for_account("telegram:group:-100", kind="group")
    store.team_bindings.bind(ids["ada"], team.id, group, "group Ops room")
    store.usage.record(group, Usage(model="m", prompt_tokens=300, completion_tokens=45),
                       session_id=None, inbox_id=None)
    store.usage.record(ids["carol"], Usage(model="m", prompt_tokens=9_000),  # carol's own
                       session_id=None, inbox_id=None)
    pages = {}
    for name in ("ada", "bob", "carol", "dan"):
        with session(dash, name) as (client, user_id, _):
            page = client.get(f"/ui/u/{user_id}/team")
            assert page.status_code == 200
            pages[name] = page.text
    for name in ("ada", "bob", "carol"):
        assert 'data-team="eng"' in pages[name]
        assert "Deploys happen on Tuesdays." in pages[name] and "by http:ada" in pages[name]
        assert 'data-member="http:carol"' in pages[name]
        assert "Bound: group Ops room" in pages[name]
        assert 'data-calls="1" data-tokens="345"' in pages[name]  # the group's, not carol's
    for name in ("ada", "bob"):
        assert f'data-held="{held_id}"' in pages[name], name
        assert "The staging password rotates monthly." in pages[name]
    assert f'data-held="{held_id}"' not in pages["carol"]
    assert "rotates monthly" not in pages["carol"]  # held notes are for admins
    assert 'data-team="eng"' not in pages["dan"] and "You are in no team" in pages["dan"]
    assert "Tuesdays" not in pages["dan"]
    # someone else's Team page is a 404, like every page of another user
    with session(dash, "dan") as (client, _, _):
        assert client.get(f"/ui/u/{ids['ada']}/team").status_code == 404


def test_a_member_cannot_approve_and_an_admin_can(dash, people):
    ids, team, held_id = people
    store = dash.runtime.store
    with session(dash, "carol") as (carol, carol_id, carol_csrf):
        answer = post(carol, dash, carol_id, "decide", carol_csrf, team="eng", note=held_id,
                      decision="approve")
        assert answer.status_code == 303
        shown = carol.get(answer.headers["location"]).text
        assert "Not done" in shown and "needs a team admin" in shown
    assert [n.id for n in store.team_notes.pending(ids["ada"], team.id)] == [held_id]

    with session(dash, "bob") as (bob, bob_id, bob_csrf):
        where = f"/ui/u/{bob_id}/team/decide"
        refused(bob, dash, where, bob_csrf, data={"team": "eng", "note": held_id,
                                                  "decision": "approve"})
        assert [n.id for n in store.team_notes.pending(ids["ada"], team.id)] == [held_id]
        answer = post(bob, dash, bob_id, "decide", bob_csrf, team="eng", note=held_id,
                      decision="approve")
        assert "is now one of eng" in bob.get(answer.headers["location"]).text
    live = [n.content for n in store.team_notes.live(ids["carol"], team.id)]
    assert "The staging password rotates monthly." in live
    assert store.team_notes.pending(ids["ada"], team.id) == []
    newest = store.teams.audit(ids["ada"], team.id)[0]
    assert (newest.actor, newest.action) == (ids["bob"], "note.approve"), newest


def test_outsiders_and_former_members_change_nothing(dash, people):
    ids, team, held_id = people
    store = dash.runtime.store
    with session(dash, "dan") as (dan, dan_id, dan_csrf):
        for action, data in (("decide", {"note": held_id, "decision": "approve"}),
                             ("add", {"account": "http:eve", "role": "admin"}),
                             ("leave", {})):
            answer = post(dan, dash, dan_id, action, dan_csrf, team="eng", **data)
            assert answer.status_code == 303, action
            assert "Not done" in dan.get(answer.headers["location"]).text, action
        # the team's id instead of its name tells an outsider no more
        answer = post(dan, dash, dan_id, "decide", dan_csrf, team=team.id, note=held_id,
                      decision="approve")
        assert "Not done" in dan.get(answer.headers["location"]).text
    assert [n.id for n in store.team_notes.pending(ids["ada"], team.id)] == [held_id]
    assert sorted(store.users.accounts(m.user_id)[0]
                  for m in store.teams.members(ids["ada"], team.id)) == \
        ["http:ada", "http:bob", "http:carol"]

    with session(dash, "carol") as (carol, carol_id, carol_csrf):
        left = post(carol, dash, carol_id, "leave", carol_csrf, team="eng")
        assert "You left eng" in carol.get(left.headers["location"]).text
        page = carol.get(f"/ui/u/{carol_id}/team").text
        assert 'data-team="eng"' not in page and "Tuesdays" not in page
        again = post(carol, dash, carol_id, "add", carol_csrf, team="eng", account="http:eve")
        assert "Not done" in carol.get(again.headers["location"]).text
    assert store.teams.role_of(team.id, ids["carol"]) is None


def test_an_admin_adds_someone_by_account(dash, people):
    _, team, _ = people
    store = dash.runtime.store
    with session(dash, "bob") as (bob, bob_id, bob_csrf):
        answer = post(bob, dash, bob_id, "add", bob_csrf, team="eng", account="http:eve")
        assert "http:eve joined eng as member" in bob.get(answer.headers["location"]).text
        over = post(bob, dash, bob_id, "add", bob_csrf, team="eng", account="http:fay",
                    role="owner")  # an admin cannot make owners
        assert "Not done" in bob.get(over.headers["location"]).text
    eve = store.users.resolve("http:eve")
    assert store.teams.role_of(team.id, eve) == "member"
    assert store.teams.role_of(team.id, store.users.for_account("http:fay")) is None
