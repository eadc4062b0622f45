"""Sign-in links and sessions (core.dashboard.signin) on a real libsql file and a ManualClock:
one use, ten minutes, only hashes stored, revocable; /dashboard and /dashboard logout in chat."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from core.clock import ManualClock
from core.dashboard.signin import (
    LinkRefused,
    csrf_ok,
    issue_link,
    redeem,
    revoke,
    revoke_all,
    session_for,
    sessions,
    token_hash,
)
from core.errors import IrisUsageError


@pytest.fixture
def clock():
    return ManualClock(datetime(2031, 3, 4, 9, 30, tzinfo=UTC))


def test_a_link_opens_one_session_once_and_only_its_hash_is_stored(store):
    alice = store.users.for_account("telegram:42")
    link = issue_link(store, alice, is_owner=False, issued_by="telegram:42",
                      base_url="https://iris.example.com/")
    assert link.url == f"https://iris.example.com/ui/signin?t={link.token}"
    opened = redeem(store, link.token, user_agent="test")
    assert opened.session.user_id == alice and not opened.session.is_owner
    assert session_for(store, opened.token) == opened.session
    with pytest.raises(LinkRefused, match="used already"):
        redeem(store, link.token)
    raw = [dict(row) for row in store.db.query("SELECT * FROM dashboard_links")] + \
          [dict(row) for row in store.db.query("SELECT * FROM dashboard_sessions")]
    dumped = repr(raw)
    assert link.token not in dumped and opened.token not in dumped
    assert token_hash(link.token) in dumped and token_hash(opened.token) in dumped


def test_a_link_expires_after_ten_minutes_on_the_store_clock(store, clock):
    alice = store.users.for_account("http:alice")
    fresh = issue_link(store, alice, is_owner=False, issued_by="cli:op", base_url=None)
    late = issue_link(store, alice, is_owner=False, issued_by="cli:op", base_url=None)
    clock.advance(timedelta(minutes=9, seconds=59))
    redeem(store, fresh.token)
    clock.advance(timedelta(seconds=1))
    with pytest.raises(LinkRefused, match="expired"):
        redeem(store, late.token)
    with pytest.raises(LinkRefused, match="not valid"):
        redeem(store, "made-up-token")


def test_sessions_end_when_revoked_or_after_thirty_days(store, clock):
    alice = store.users.for_account("http:alice")
    bob = store.users.for_account("http:bob")
    first = redeem(store, issue_link(store, alice, is_owner=True, issued_by="cli:op",
                                     base_url=None).token)
    second = redeem(store, issue_link(store, alice, is_owner=False, issued_by="cli:op",
                                      base_url=None).token)
    bobs = redeem(store, issue_link(store, bob, is_owner=False, issued_by="cli:op",
                                    base_url=None).token)
    assert first.session.is_owner
    assert {s.id for s in sessions(store, alice)} == {first.session.id, second.session.id}
    assert not revoke(store, first.session.id, user_id=bob)  # not bob's to revoke
    assert revoke(store, first.session.id, user_id=alice)
    assert session_for(store, first.token) is None
    assert revoke_all(store, alice) == 1
    assert session_for(store, second.token) is None
    assert session_for(store, bobs.token) is not None
    clock.advance(timedelta(days=30))
    assert session_for(store, bobs.token) is None


def test_csrf_tokens_are_per_session(store):
    alice = store.users.for_account("http:alice")
    one, two = (redeem(store, issue_link(store, alice, is_owner=False, issued_by="x",
                                         base_url=None).token) for _ in range(2))
    assert csrf_ok(one.session, one.session.csrf)
    assert not csrf_ok(one.session, two.session.csrf)
    assert not csrf_ok(one.session, None) and not csrf_ok(one.session, "")


def test_a_group_gets_no_dashboard(store):
    group = store.users.for_account("telegram:-100", kind="group")
    with pytest.raises(IrisUsageError, match="private chat"):
        issue_link(store, group, is_owner=False, issued_by="telegram:42", base_url=None)


def test_the_chat_command_gives_a_link_and_logs_out(runtime):
    from core.commands import CommandContext, run_command

    store = runtime.store
    alice = store.users.for_account("telegram:42")
    session = store.sessions.current(alice, "telegram:42", "telegram", idle_seconds=60,
                                     at=store.clock.now())

    def ctx(is_owner: bool = False) -> CommandContext:
        return CommandContext(store=store, settings=runtime.settings, services=runtime.services,
                              user_id=alice, account="telegram:42", chat_key="telegram:42",
                              platform="telegram", session=session, is_owner=is_owner)

    reply = asyncio.run(run_command(ctx(is_owner=True), "/dashboard")).reply
    assert "http://127.0.0.1:8787/ui/signin?t=" in reply
    token = reply.split("?t=")[1].split()[0]
    opened = redeem(store, token)
    assert opened.session.is_owner and opened.session.user_id == alice
    reply = asyncio.run(run_command(ctx(), "/dashboard logout")).reply
    assert "1 session ended" in reply
    assert session_for(store, opened.token) is None
