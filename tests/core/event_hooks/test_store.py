"""Event webhooks' rows and runs on the store (both backends): each user sees and names only
their own endpoints, a rotated secret replaces the old one, a removed endpoint is gone from its
URL, and a delivery id records one run, in its owner's inbox, counted by the rate limit."""

from __future__ import annotations

import pytest

from core.errors import IrisUsageError, NotFound
from core.event_hooks.runs import start
from core.scheduler.targets import INBOX

TARGET = INBOX.to_dict()


def test_endpoints_belong_to_their_user(store):
    ada = store.users.for_account("http:ada")
    bob = store.users.for_account("http:bob")
    hook = store.event_hooks.create(ada, "ci", "Summarise it.", TARGET)
    assert store.event_hooks.lookup(hook.id) == hook
    assert store.event_hooks.get(ada, "ci") == hook
    assert store.event_hooks.find(bob, hook.id) is None and store.event_hooks.list(bob) == []
    with pytest.raises(NotFound):
        store.event_hooks.rotate_secret(bob, hook.id)
    with pytest.raises(NotFound):
        store.event_hooks.remove(bob, hook.id)
    with pytest.raises(IrisUsageError):
        store.event_hooks.create(ada, "ci", "again", TARGET)
    store.event_hooks.create(bob, "ci", "Bob's own.", TARGET)  # names are per user

    rotated = store.event_hooks.rotate_secret(ada, "ci")
    assert rotated.secret != hook.secret and store.event_hooks.lookup(hook.id) == rotated
    store.event_hooks.remove(ada, hook.id)
    assert store.event_hooks.lookup(hook.id) is None and store.event_hooks.list(ada) == []


def test_a_delivery_id_records_one_run_in_its_owners_inbox(store, clock):
    ada = store.users.for_account("http:ada")
    hook = store.event_hooks.create(ada, "ci", "Summarise it.", TARGET)
    first = start(store, hook, '{"a": 1}', scheme="github", delivery_id="d-1", event="push")
    again = start(store, hook, '{"a": 1}', scheme="github", delivery_id="d-1", event="push")
    assert first.inbox_id is not None and again.inbox_id is None
    assert first.run_id == again.run_id
    entry = store.inbox.get(ada, first.inbox_id)
    assert entry.message.cron is not None and entry.message.cron.trigger == "event"
    assert entry.message.cron.target == TARGET and entry.chat_key == hook.chat_key
    assert '<untrusted source="event webhook">' in entry.message.text
    since = clock.now() - 60
    assert store.event_hooks.recent_runs(ada, hook.id, since) == 1
    start(store, hook, "{}", scheme="github", delivery_id="d-2")
    other = store.event_hooks.create(ada, "alerts", "Page me.", TARGET)
    start(store, other, "{}", scheme="generic", delivery_id="a-1")
    assert store.event_hooks.recent_runs(ada, hook.id, since) == 2
    assert store.event_hooks.recent_runs(ada, None, since) == 3
    assert store.event_hooks.recent_runs(store.users.for_account("http:bob"), None, since) == 0
