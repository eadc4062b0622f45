"""A Telegram group bound to a team, through the real webhook and worker against the fake Bot
API, in pairing mode: an admin binds the group with `/team bind`; a person who may talk to Iris
(approved through pairing) joins the team by writing there; a stranger in the group does not
(Iris ignores unknown senders in groups) until their pairing is approved; someone who left is
not pulled back in; a member cannot bind; unbinding stops new joins."""

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from core.clock import ManualClock
from core.errors import IrisUsageError
from functions import cron
from iris_testing.platform_stack import platform_stack
from tests.core.scheduler.cron_helpers import make_job

GROUP = -1001000000077
NOW = datetime(2031, 5, 6, 8, 0, tzinfo=UTC)
OWNER, ADMIN, MEMBER, NEWCOMER, STRANGER, LATE = 4242, 5151, 6161, 7171, 8181, 9191


@pytest.fixture
def stack(iris_home):
    allowed = ",".join(str(user) for user in (OWNER, ADMIN, MEMBER, NEWCOMER, LATE))
    with platform_stack(iris_home, IRIS_TELEGRAM_ACCESS="pairing", IRIS_TELEGRAM_ALLOW=allowed,
                        IRIS_OWNER_ACCOUNTS=f"telegram:{OWNER}") as running:
        running.rt.store.bots.put("telegram", "7000001",
                                  {"id": 7000001, "username": "iris_test_bot"})
        yield running


def tick(rt):
    async def go():
        await cron.tick(rt)
        await rt.dispatcher.idle()

    asyncio.run(go())


def direct(stack, user, text):
    before = len(stack.telegram.sent_messages(user))
    assert stack.telegram_post(stack.telegram.make_update(text, user_id=user)).status_code == 200
    stack.wait(lambda: len(stack.telegram.sent_messages(user)) > before)
    return stack.telegram.sent_messages(user)[-1]["text"]


def in_group(stack, user, text):
    """``user`` sends ``text`` (a command, so Iris acts on it in the group); Iris' answer."""
    before = len(stack.telegram.sent_messages(GROUP))
    update = stack.telegram.make_update(text, user_id=user, chat_id=GROUP,
                                        chat_type="supergroup", first_name=f"U{user}")
    status = stack.telegram_post(update).json()["status"]
    if status != "recorded":
        return status
    stack.wait(lambda: len(stack.telegram.sent_messages(GROUP)) > before)
    return stack.telegram.sent_messages(GROUP)[-1]["text"]


def role(stack, user):
    store = stack.rt.store
    owner = store.users.resolve(f"telegram:{OWNER}")
    team = store.teams.find(owner, "eng")
    try:
        person = store.users.resolve(f"telegram:{user}")
    except Exception:
        return None
    return store.teams.role_of(team.id, person)


def test_writing_in_a_bound_group_joins_the_team(stack):
    assert "Team eng created" in direct(stack, OWNER, "/team create eng")
    direct(stack, OWNER, f"/team add eng telegram:{ADMIN} admin")
    direct(stack, ADMIN, f"/team add eng telegram:{MEMBER}")

    assert "Nothing changed" in in_group(stack, MEMBER, "/team bind eng")  # not an admin
    assert "bound to eng" in in_group(stack, ADMIN, "/team bind eng")
    assert "already bound" in in_group(stack, OWNER, "/team bind eng")

    in_group(stack, NEWCOMER, "/help")  # allowed to talk to Iris: writing here joins
    assert role(stack, NEWCOMER) == "member"
    assert "eng" in direct(stack, NEWCOMER, "/team")

    assert in_group(stack, STRANGER, "/help") == "denied"  # unknown: ignored, joins nothing
    assert role(stack, STRANGER) is None
    assert "pairing code" in direct(stack, STRANGER, "hello").lower()
    pending = stack.rt.store.db.one("SELECT code FROM pairing_requests")["code"]
    assert "approved" in direct(stack, OWNER, f"/approve {pending}").lower()
    in_group(stack, STRANGER, "/help")
    assert role(stack, STRANGER) == "member"

    assert "You left eng" in direct(stack, NEWCOMER, "/team leave eng")
    in_group(stack, NEWCOMER, "/help")
    assert role(stack, NEWCOMER) is None  # left: writing in the group does not pull them back

    assert "no longer bound" in in_group(stack, ADMIN, "/team unbind eng")
    in_group(stack, LATE, "/help")
    assert role(stack, LATE) is None  # unbound: no new joins
    assert role(stack, STRANGER) == "member"  # who joined stays
    audit = direct(stack, OWNER, "/team audit eng")
    assert "bind" in audit and "unbind" in audit and "join" in audit


def test_in_a_group_the_sender_acts_and_the_group_sees_only_what_it_may(stack):
    """Team commands in a group act as the person who sent them (the group's own user is in
    no team); notes are shown only for a team bound to that group, and what only admins may
    read is answered in a direct chat only."""
    store = stack.rt.store
    direct(stack, OWNER, "/team create eng")
    direct(stack, OWNER, f"/team add eng telegram:{ADMIN} admin")
    direct(stack, OWNER, f"/team add eng telegram:{MEMBER}")
    direct(stack, OWNER, "/team create ops")  # not bound to the group
    assert "bound to eng" in in_group(stack, ADMIN, "/team bind eng")
    person = {u: store.users.resolve(f"telegram:{u}") for u in (OWNER, ADMIN, MEMBER)}
    group = store.users.resolve(f"telegram:group:{GROUP}")
    team = store.teams.find(person[OWNER], "eng")

    assert in_group(stack, MEMBER, "/team") == "Teams bound to this group that you are in: eng."
    held = in_group(stack, MEMBER, "/remember team: Deploys are frozen on Fridays.")
    assert "held for a eng admin's approval" in held
    (note,) = store.team_notes.pending(person[OWNER], team.id)
    assert note.author == person[MEMBER]  # the sender's note, not the group's
    refused = in_group(stack, ADMIN, "/team pending eng")
    assert "direct chat" in refused and "Fridays" not in refused
    assert "direct chat" in in_group(stack, ADMIN, "/team audit eng")
    assert "Fridays" in direct(stack, ADMIN, "/team pending eng")

    assert "is now one of eng" in in_group(stack, ADMIN, f"/team approve eng {note.id}")
    newest = store.teams.audit(person[OWNER], team.id)[0]
    assert (newest.actor, newest.action) == (person[ADMIN], "note.approve")
    assert "Fridays" in in_group(stack, MEMBER, "/team notes eng")  # bound: its own chat
    assert "not bound to ops" in in_group(stack, OWNER, "/team notes ops")

    assert "created" in in_group(stack, NEWCOMER, "/team create side")
    newcomer = store.users.resolve(f"telegram:{NEWCOMER}")
    assert [t.name for t, r in store.teams.of_user(newcomer) if r == "owner"] == ["side"]
    assert store.teams.of_user(group) == []


def test_a_members_job_delivers_to_the_teams_bound_group(iris_home):
    clock = ManualClock(NOW)
    allowed = ",".join(str(user) for user in (OWNER, MEMBER, LATE))
    with platform_stack(iris_home, clock=clock, IRIS_TELEGRAM_ACCESS="pairing",
                        IRIS_TELEGRAM_ALLOW=allowed) as stack:
        stack.rt.store.bots.put("telegram", "7000001",
                                {"id": 7000001, "username": "iris_test_bot"})
        store, settings = stack.rt.store, stack.rt.settings
        direct(stack, OWNER, "/team create eng")
        direct(stack, OWNER, f"/team add eng telegram:{MEMBER}")
        direct(stack, LATE, "hi")
        with pytest.raises(IrisUsageError, match="no bound group chat"):
            make_job(store, settings, schedule="every 5h", at=NOW, account=f"telegram:{MEMBER}",
                     deliver="team:eng", name="too-early")
        assert "bound to eng" in in_group(stack, OWNER, "/team bind eng")
        stack.wait(stack.settled)
        with pytest.raises(IrisUsageError, match="no team 'eng'"):  # not a member
            make_job(store, settings, schedule="every 5h", at=NOW, account=f"telegram:{LATE}",
                     deliver="team:eng", name="outsider")
        job = make_job(store, settings, schedule="every 5h", at=NOW,
                       account=f"telegram:{MEMBER}", prompt="post the standup reminder",
                       deliver="team:eng", name="standup")
        assert job.target.label.startswith("team eng's chat")
        before = len(stack.telegram.sent_messages(GROUP))
        clock.set(NOW + timedelta(hours=5))
        tick(stack.rt)
        stack.wait(lambda: len(stack.telegram.sent_messages(GROUP)) > before)
        posted = stack.telegram.sent_messages(GROUP)[-1]["text"]
        assert posted.startswith("⏰ standup") and "post the standup reminder" in posted
