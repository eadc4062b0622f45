"""Pairing codes: expiry, the per-platform quota (the oldest request makes room), lockout
after five wrong codes, and approval from the CLI or an owner's /approve."""

import pytest

from core.clock import ManualClock
from core.errors import IrisUsageError
from core.identity.access import check_access
from core.identity.accounts import FAILURE_WINDOW, MAX_FAILURES, LockedOut
from core.identity.pairing import APPROVED_TEXT, CODE_SECONDS, MAX_PENDING_PER_PLATFORM, Pairing
from tests.clocks import NOW
from tests.core.identity.helpers import deliver, message


@pytest.fixture
def clock():
    """Expiries here are reached by moving the store's clock, never by editing rows."""
    return ManualClock(NOW)


def request_code(store, settings, account="telegram:555"):
    check_access(store, settings, message(account))
    return Pairing(store).pending_for(account).code


def test_an_expired_code_cannot_be_approved_and_a_new_one_is_issued(store, settings):
    code = request_code(store, settings)
    store.clock.advance(CODE_SECONDS + 1)
    assert Pairing(store).list() == []
    with pytest.raises(IrisUsageError, match="has expired"):
        Pairing(store).approve(code, by="cli:owner")
    fresh = request_code(store, settings)
    assert fresh != code
    assert [r.status for r in Pairing(store).list(include_all=True)] == ["pending", "expired"]
    assert Pairing(store).approve(fresh, by="cli:owner").status == "approved"


def test_expired_codes_free_the_platform_quota(store, settings):
    codes = [request_code(store, settings, f"telegram:{n}")
             for n in range(MAX_PENDING_PER_PLATFORM)]
    assert "pairing code" in check_access(store, settings, message("telegram:9000")).reply
    assert Pairing(store).get(codes[0]).status == "dropped"  # full: the oldest made room
    store.clock.advance(CODE_SECONDS + 1)
    assert "pairing code" in check_access(store, settings, message("telegram:9001")).reply
    assert [r.status for r in Pairing(store).list(include_all=True)].count("dropped") == 1


def test_five_wrong_codes_lock_the_approver_out(store, settings):
    code = request_code(store, settings)
    pairing = Pairing(store)
    for attempt in range(1, MAX_FAILURES):
        with pytest.raises(IrisUsageError, match=f"{MAX_FAILURES - attempt} attempts? left"):
            pairing.approve("ZZZZZZZZ", by="telegram:42")
    with pytest.raises(LockedOut, match="locked out for 60 minutes"):
        pairing.approve("ZZZZZZZZ", by="telegram:42")
    with pytest.raises(LockedOut, match="try again after"):
        pairing.approve(code, by="telegram:42")
    assert pairing.get(code).status == "pending"
    assert pairing.approve(code, by="cli:other-owner").status == "approved"
    store.access.clear_failures("telegram:42")
    with pytest.raises(IrisUsageError, match="was already approved"):
        pairing.approve(code, by="telegram:42")


def test_failures_older_than_the_window_do_not_count(store, settings):
    pairing = Pairing(store)
    for _ in range(MAX_FAILURES - 1):
        with pytest.raises(IrisUsageError):
            pairing.approve("ZZZZZZZZ", by="cli:me")
    store.clock.advance(FAILURE_WINDOW + 1)
    with pytest.raises(IrisUsageError, match="4 attempts left"):
        pairing.approve("ZZZZZZZZ", by="cli:me")


def test_owner_approves_from_a_chat_and_the_person_is_told(runtime, scripted):
    rt = runtime
    rt.settings = rt.settings.model_copy(update={"owner_accounts": ["telegram:42"]})
    denied, _ = deliver(rt, message("telegram:555", name="Eve"))
    code = Pairing(rt.store).pending_for("telegram:555").code
    assert code in denied.reply
    _, stranger = deliver(rt, message("http:mallory", f"/approve {code}"))
    assert stranger.reply == "Only the owner of this Iris can approve pairing codes."
    _, approved = deliver(rt, message("telegram:42", f"/approve {code.lower()}"))
    assert approved.reply == (
        "Approved Eve (telegram:555). I'll let them know they can talk to me now.")
    user = rt.store.users.resolve("telegram:555")
    (notice,) = rt.store.deliveries.for_chat(user, "telegram:555")
    assert (notice.text, notice.target["chat_id"], notice.source) == (
        APPROVED_TEXT, "555", f"pairing:{code}")
    scripted.then("Hello Eve!")
    allowed, entry = deliver(rt, message("telegram:555", "hi"))
    assert allowed.allowed and entry.reply == "Hello Eve!"
    assert scripted.requests and len(scripted.requests) == 1


def test_approve_without_a_pending_code_says_so(runtime):
    rt = runtime
    rt.settings = rt.settings.model_copy(update={"owner_accounts": ["telegram:42"]})
    _, bare = deliver(rt, message("telegram:42", "/approve"))
    assert bare.reply == "Nothing is waiting for approval."
    _, wrong = deliver(rt, message("telegram:42", "/approve ABCDEFGH"))
    assert wrong.reply.startswith("Not approved: 'ABCDEFGH' is not a pending pairing code")
    assert "4 attempts left" in wrong.reply
    _, other = deliver(rt, message("telegram:42", "/approve whatever this is"))
    assert "neither a pending pairing code nor a held command" in other.reply


def test_revoking_a_code_and_an_account(store, settings):
    pairing = Pairing(store)
    code = request_code(store, settings)
    assert pairing.revoke(code, by="cli:me") == f"pairing code {code} revoked"
    with pytest.raises(IrisUsageError, match="was revoked"):
        pairing.approve(code, by="cli:me")
    pairing.approve_account("telegram:555", by="cli:me")
    assert check_access(store, settings, message("telegram:555")).allowed
    assert "access withdrawn" in pairing.revoke("telegram:555", by="cli:me")
    assert not check_access(store, settings, message("telegram:555")).allowed
