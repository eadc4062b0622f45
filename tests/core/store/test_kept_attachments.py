"""Kept email attachments: the rows noting them (m055, with the inbox's older attachments
adopted) and the sweep's rule (core.platforms.email_retention), bounded and per user."""

from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.messages import Attachment, InboundMessage
from core.platforms.email_retention import expire_attachments
from core.store.migrations import migrate
from tests.clocks import NOW

DAY = timedelta(days=1)


@pytest.fixture
def clock():
    return ManualClock(NOW)


def key(n: int) -> str:
    return f"inbound/email/{n:032x}/1"


def test_expiry_is_bounded_per_sweep_and_a_missing_object_counts_as_gone(store, clock):
    users = [store.users.for_account(f"email:u{i}@example.com") for i in range(3)]
    for user in users:
        for n in (1, 2, 3):
            store.kept_attachments.keep(user, key(n))
            if n != 2:  # this one's object was never written (a crash between note and put)
                store.objects.put(user, key(n), b"x")
    clock.advance(10 * DAY)
    fresh = store.users.for_account("email:fresh@example.com")
    store.kept_attachments.keep(fresh, key(1))
    store.objects.put(fresh, key(1), b"new")
    clock.advance(25 * DAY)  # the first nine are 35 days old, the fresh one 25

    passes = []
    while gone := expire_attachments(store, 30, owners=2, per_owner=2):
        passes.append(gone)
    assert sum(passes) == 9 and max(passes) <= 4
    for user in users:
        assert store.objects.list(user, "inbound/") == []
        assert store.kept_attachments.keys(user) == []
    assert store.objects.list(fresh, "inbound/") == [key(1)]
    assert store.kept_attachments.keys(fresh) == [key(1)]


def test_a_key_noted_again_keeps_its_first_time(store, clock):
    user = store.users.for_account("email:ada@example.com")
    store.kept_attachments.keep(user, key(1))
    clock.advance(20 * DAY)
    store.kept_attachments.keep(user, key(1))  # a redelivered mail
    clock.advance(11 * DAY)
    assert store.kept_attachments.due(user, clock.now() - 30 * 86_400, limit=10) == [key(1)]


def test_m055_adopts_the_attachments_older_mail_kept(store, clock):
    ada = store.users.for_account("email:ada@example.com")
    bob = store.users.for_account("email:bob@example.com")
    refs = (f"{ada}/{key(1)}", f"{bob}/{key(2)}", "https://elsewhere.example/x.png")
    store.inbox.add(ada, InboundMessage(
        platform="email", chat_id="t1", account="email:ada@example.com",
        platform_message_id="<m1@example.com>", text="see attached",
        attachments=tuple(Attachment(kind="file", ref=ref) for ref in refs)))
    # as before m055: the table did not exist
    store.db.executescript("DROP TABLE kept_attachments;")
    store.db.execute("DELETE FROM _migrations WHERE name LIKE 'm055%'")
    clock.advance(DAY)
    assert migrate(store.db) == ["m055_kept_attachments"]
    assert store.kept_attachments.keys(ada) == [key(1)]  # only what ada's own mail kept for her
    assert store.kept_attachments.keys(bob) == []
    assert store.kept_attachments.due(ada, NOW.timestamp() + 1, limit=5) == [key(1)]
