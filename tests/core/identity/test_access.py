"""check_access: per-platform policy for Telegram and Slack; HTTP trusted through its key."""

import pytest

from core.config import load_settings
from core.identity.access import NOT_ALLOWED, check_access
from core.identity.codes import CODE_RE
from core.identity.pairing import MAX_PENDING_PER_PLATFORM, Pairing
from tests.core.identity.helpers import message


def policy(settings, **changes):
    return settings.model_copy(update=changes)


def count(store, table):
    return store.db.scalar(f"SELECT count(*) FROM {table}")


def test_http_callers_are_trusted(store, settings):
    decision = check_access(store, settings, message("http:alice"))
    assert decision.allowed and decision.user_id == store.users.resolve("http:alice")


def test_unknown_telegram_account_gets_a_pairing_code_by_default(store, settings):
    first = check_access(store, settings, message("telegram:555", name="Eve"))
    assert not first.allowed and first.user_id is None
    (request,) = Pairing(store).list()
    assert CODE_RE.match(request.code) and request.code in first.reply
    assert f"iris pairing approve {request.code}" in first.reply
    assert (request.account, request.display_name) == ("telegram:555", "Eve")
    again = check_access(store, settings, message("telegram:555"))
    assert again.reply == first.reply and len(Pairing(store).list()) == 1


def test_a_full_platform_makes_room_by_dropping_its_oldest_request(store, settings):
    for n in range(MAX_PENDING_PER_PLATFORM):
        assert "pairing code" in check_access(store, settings, message(f"telegram:{n}")).reply
    full = check_access(store, settings, message("telegram:99"))
    assert "pairing code" in full.reply
    pending = Pairing(store).list()
    assert len(pending) == MAX_PENDING_PER_PLATFORM
    assert "telegram:0" not in {r.account for r in pending}
    assert "telegram:99" in {r.account for r in pending}
    other = check_access(store, settings, message("slack:T1/U1"))
    assert "pairing code" in other.reply
    assert len(Pairing(store).list()) == MAX_PENDING_PER_PLATFORM + 1


def test_allowlist_lets_in_listed_accounts_only(store, settings):
    strict = policy(settings, telegram_access="allowlist", telegram_allow=["123"],
                    slack_access="allowlist", slack_allow=["U9"])
    assert check_access(store, strict, message("telegram:123")).allowed
    assert check_access(store, strict, message("slack:T1/U9")).allowed
    before = count(store, "users")
    refused = check_access(store, strict, message("telegram:666"))
    assert (refused.allowed, refused.reply) == (False, NOT_ALLOWED)
    assert count(store, "users") == before and count(store, "pairing_requests") == 0


def test_open_policy_lets_anyone_in(store, settings):
    assert check_access(store, policy(settings, slack_access="open"),
                        message("slack:T1/U77")).allowed


def test_owner_accounts_are_let_in_and_marked_owner(store, settings):
    owned = policy(settings, owner_accounts=["telegram:42"])
    decision = check_access(store, owned, message("telegram:42"))
    assert decision.allowed and store.users.get(decision.user_id).is_owner


def test_unknown_sender_in_a_group_is_ignored_silently(store, settings):
    decision = check_access(store, settings, message("telegram:555", chat="-100", group=True))
    assert decision == type(decision)(allowed=False, reply=None, user_id=None)
    assert count(store, "pairing_requests") == 0


def test_approved_accounts_get_in(store, settings):
    reply = check_access(store, settings, message("telegram:555")).reply
    code = Pairing(store).list()[0].code
    assert code in reply
    Pairing(store).approve(code, by="cli:owner")
    assert check_access(store, settings, message("telegram:555")).allowed
    Pairing(store).revoke("telegram:555", by="cli:owner")
    assert not check_access(store, settings, message("telegram:555")).allowed


@pytest.mark.parametrize("raw, parsed", [
    ("123, 456", ["123", "456"]), ('["telegram:1", "2"]', ["telegram:1", "2"]), ("", []),
])
def test_allow_lists_from_the_environment(monkeypatch, raw, parsed):
    monkeypatch.setenv("IRIS_TELEGRAM_ALLOW", raw)
    monkeypatch.setenv("IRIS_OWNER_ACCOUNTS", "telegram:42 slack:T1/U9")
    settings = load_settings()
    assert settings.telegram_allow == parsed
    assert settings.owner_accounts == ["telegram:42", "slack:T1/U9"]
