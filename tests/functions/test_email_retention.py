"""Kept email attachments expire: the webhook notes when it kept each one (on the store's clock)
and the sweep deletes those older than ``email_attachment_days``, owner by owner; the clock is a
ManualClock, so the suite gives the same answers on any date."""

import asyncio
from datetime import timedelta

import pytest

from core.clock import ManualClock
from core.intake.documents import DocumentRefused
from functions.sweeper import sweep
from iris_testing.mail_inbound import raw_mail
from iris_testing.platform_stack import platform_stack
from tests.clocks import NOW

CSV = b"harbour,depth_m\nWells,2.4\n"
DAY = timedelta(days=1)


def mail_with_attachment(stack, sender, name):
    raw = raw_mail("See attached.", sender=sender,
                   attachments=[(name, CSV, "text/csv")])
    sent = len(stack.mails())
    assert stack.email_post(raw).json()["status"] == "recorded"
    stack.wait(lambda: len(stack.mails()) > sent)


def kept(stack, account):
    """The user's attachment objects and the rows noting them."""
    store = stack.rt.store
    user = store.users.resolve(account)
    return store.objects.list(user, "inbound/email/"), store.kept_attachments.keys(user)


def test_attachments_are_deleted_after_their_days_per_user(iris_home):
    clock = ManualClock(NOW)
    with platform_stack(iris_home, clock=clock, IRIS_EMAIL_ATTACHMENT_DAYS="30") as stack:
        mail_with_attachment(stack, "Ada <ada@example.com>", "ada.csv")
        clock.set(NOW + 20 * DAY)
        mail_with_attachment(stack, "Bob <bob@example.com>", "bob.csv")
        ada_objects, ada_rows = kept(stack, "email:ada@example.com")
        bob_objects, bob_rows = kept(stack, "email:bob@example.com")
        assert len(ada_objects) == 1 and ada_rows == ada_objects
        assert len(bob_objects) == 1 and bob_rows == bob_objects

        clock.set(NOW + 29 * DAY)
        assert asyncio.run(sweep(stack.rt)).attachments_expired == 0
        assert kept(stack, "email:ada@example.com") == (ada_objects, ada_rows)

        clock.set(NOW + 31 * DAY)  # Ada's is 31 days old, Bob's 11
        assert asyncio.run(sweep(stack.rt)).attachments_expired == 1
        assert kept(stack, "email:ada@example.com") == ([], [])
        assert kept(stack, "email:bob@example.com") == (bob_objects, bob_rows)
        ada = stack.rt.store.users.resolve("email:ada@example.com")
        with pytest.raises(DocumentRefused, match="no longer kept"):
            asyncio.run(stack.rt.senders["email"].download(f"{ada}/{ada_objects[0]}"))

        clock.set(NOW + 51 * DAY)
        assert asyncio.run(sweep(stack.rt)).attachments_expired == 1
        assert kept(stack, "email:bob@example.com") == ([], [])
        assert asyncio.run(sweep(stack.rt)).attachments_expired == 0
