import time

import pytest

from core.contracts.outcome import OutboundReply
from core.errors import NotFound
from core.messages import InboundMessage, Message, Usage
from core.turn.commit import TurnAlreadyFinished, TurnRecord, record_turn


def inbound(pmid="m1", text="hi", account="http:alice", chat="alice", platform="http"):
    return InboundMessage(
        platform=platform, chat_id=chat, account=account, platform_message_id=pmid, text=text
    )


def test_accounts_resolve_to_one_user(store):
    alice = store.users.for_account("http:alice")
    assert store.users.for_account("http:alice") == alice
    assert store.users.resolve("http:alice") == alice
    assert store.users.resolve(alice) == alice
    assert store.users.resolve("alice") == alice  # bare name = HTTP account
    assert store.users.for_account("telegram:42") != alice
    with pytest.raises(NotFound):
        store.users.resolve("slack:T1/U404")


def test_inbox_is_idempotent_per_platform_message(store):
    user = store.users.for_account("http:alice")
    first = store.inbox.add(user, inbound())
    assert first is not None
    assert store.inbox.add(user, inbound(text="retry with other text")) is None
    assert store.inbox.find(user, "http", "m1").message.text == "hi"
    assert store.inbox.add(user, inbound(platform="telegram", account="telegram:1")) is not None


def test_inbox_drains_in_arrival_order_and_is_scoped_by_user(store):
    alice = store.users.for_account("http:alice")
    bob = store.users.for_account("http:bob")
    ids = [store.inbox.add(alice, inbound(pmid=f"a{i}", text=str(i))) for i in range(3)]
    store.inbox.add(bob, inbound(pmid="b1", account="http:bob", chat="bob"))
    assert store.inbox.next_pending(alice, "http:alice").id == ids[0]
    assert store.inbox.next_pending(bob, "http:alice") is None
    with pytest.raises(NotFound):
        store.inbox.get(bob, ids[0])


def test_lease_excludes_others_until_expiry(store):
    assert store.leases.acquire("chat:x", "u", "w1", ttl=30)
    assert not store.leases.acquire("chat:x", "u", "w2", ttl=30)
    assert store.leases.acquire("chat:x", "u", "w1", ttl=30)  # re-entrant for its owner
    store.leases.release("chat:x", "w2")  # not the owner: no effect
    assert store.leases.holder("chat:x") == "w1"
    assert store.leases.acquire("chat:y", "u", "w1", ttl=-1)  # already expired
    assert store.leases.acquire("chat:y", "u", "w2", ttl=30)
    store.leases.release("chat:x", "w1")
    assert store.leases.acquire("chat:x", "u", "w2", ttl=30)


def test_idle_gap_starts_a_new_session(store):
    user = store.users.for_account("http:alice")
    t0 = time.time()
    first = store.sessions.current(user, "http:alice", "http", idle_seconds=60, at=t0)
    assert store.sessions.current(user, "http:alice", "http", idle_seconds=60, at=t0 + 30) == first
    later = store.sessions.current(user, "http:alice", "http", idle_seconds=60, at=t0 + 120)
    assert later.id != first.id
    assert store.sessions.get(user, first.id).end_reason == "idle"


def test_frozen_prompt_is_kept(store):
    user = store.users.for_account("http:alice")
    session = store.sessions.start(user, "http:alice", "http")
    assert store.sessions.freeze_prompt(user, session.id, "first") == "first"
    assert store.sessions.freeze_prompt(user, session.id, "second") == "first"


def _record(store, user, entry_id, session):
    entry = store.inbox.get(user, entry_id)
    return TurnRecord(
        entry=entry, session_id=session.id,
        messages=[Message(role="user", content="hi"), Message(role="assistant", content="hey")],
        usage=[Usage(model="m", prompt_tokens=3, completion_tokens=2)], reply="hey",
        outbound=OutboundReply(platform="telegram", target={"chat_id": "1"}, text="hey"),
    )


def test_record_turn_is_all_or_nothing_and_only_once(store):
    user = store.users.for_account("http:alice")
    entry_id = store.inbox.add(user, inbound())
    session = store.sessions.start(user, "http:alice", "http")
    record = _record(store, user, entry_id, session)
    delivery = record_turn(store, record)
    assert delivery is not None
    assert store.inbox.get(user, entry_id).status == "done"
    assert store.messages.count(user, session.id) == 2
    assert store.usage.totals(user).prompt_tokens == 3
    assert store.deliveries.get(user, delivery.id).text == "hey"
    with pytest.raises(TurnAlreadyFinished):
        record_turn(store, record)
    assert store.messages.count(user, session.id) == 2
    assert store.usage.totals(user).calls == 1
    assert store.deliveries.for_source(user, f"inbox:{entry_id}").id == delivery.id


def round_trips(store) -> int:
    return store.db.remote_counters().get("round_trips", 0)


def test_a_turn_is_recorded_in_one_round_trip_and_a_new_account_in_two(store, db_backend):
    """Over a remote database each is one request, so no transaction holds the write lock
    while waiting for the network (issue 30: 50 users at once queued behind them)."""
    before = round_trips(store)
    user = store.users.for_account("telegram:7", display_name="Seven")
    created = round_trips(store) - before
    assert store.users.for_account("telegram:7") == user
    assert store.db.scalar("SELECT count(*) FROM users WHERE id = ?", (user,)) == 1
    assert store.users.get(user).display_name == "Seven"
    entry_id = store.inbox.add(user, inbound(account="telegram:7", platform="telegram"))
    session = store.sessions.start(user, "telegram:7", "telegram")
    record = _record(store, user, entry_id, session)
    before = round_trips(store)
    delivery = record_turn(store, record, claim=("w1", 30.0))
    recorded = round_trips(store) - before
    assert delivery is not None and delivery.attempts == 1 and delivery.text == "hey"
    claimed = store.db.scalar("SELECT claimed_by FROM deliveries WHERE id = ?", (delivery.id,))
    assert claimed == "w1"
    if db_backend == "hrana":
        assert (created, recorded) == (2, 1)  # the lookup, then the inserts and the read


def test_one_new_account_asked_for_at_once_from_many_threads_is_one_user(store):
    from concurrent.futures import ThreadPoolExecutor

    barrier = __import__("threading").Barrier(6)

    def claim(_: int) -> str:
        barrier.wait()
        return store.users.for_account("slack:T1/U9")

    with ThreadPoolExecutor(6) as pool:
        owners = set(pool.map(claim, range(6)))
    assert len(owners) == 1
    assert store.db.scalar("SELECT count(*) FROM users") == 1
    assert store.db.scalar("SELECT count(*) FROM accounts WHERE account = 'slack:T1/U9'") == 1


def test_delivery_claim_is_exclusive(store):
    user = store.users.for_account("telegram:1")
    delivery = store.deliveries.add(
        user, source="inbox:1", platform="telegram", chat_key="telegram:1",
        target={"chat_id": "1"}, text="x",
    )
    assert store.deliveries.add(
        user, source="inbox:1", platform="telegram", chat_key="telegram:1", target={}, text="y"
    ) is None
    assert store.deliveries.claim(user, delivery, "a", ttl=60) is not None
    assert store.deliveries.claim(user, delivery, "b", ttl=60) is None
    store.deliveries.mark_sent(user, delivery, "a", ["m1"])
    assert store.deliveries.claim(user, delivery, "b", ttl=60) is None
    assert store.deliveries.get(user, delivery).platform_ids == ["m1"]


def test_usage_is_kept_by_kind_per_user_and_session(store):
    alice = store.users.for_account("http:alice")
    bob = store.users.for_account("http:bob")
    session = store.sessions.start(alice, "http:alice", "http")
    store.usage.record(alice, Usage(model="m", prompt_tokens=5, cost_usd=0.01),
                       session_id=session.id, inbox_id=1)
    store.usage.record(alice, Usage(model="openai/whisper-1", cost_usd=0.0004,
                                    kind="transcription"), session_id=session.id, inbox_id=1)
    store.usage.record(alice, Usage(model="openai/whisper-1", cost_usd=None,
                                    kind="transcription"), session_id=None, inbox_id=None)
    store.usage.record(bob, Usage(model="openai/whisper-1", cost_usd=0.5, kind="transcription"),
                       session_id=None, inbox_id=None)
    kinds = store.usage.by_kind(alice)
    assert set(kinds) == {"chat", "transcription"}
    assert kinds["transcription"].calls == 2
    assert kinds["transcription"].cost_usd == pytest.approx(0.0004)  # an unpriced call adds none
    assert store.usage.by_kind(alice, session_id=session.id)["transcription"].calls == 1
    assert [u.kind for u in store.usage.for_inbox(alice, 1)] == ["chat", "transcription"]
    assert store.usage.totals(alice).calls == 3
    assert store.usage.by_kind(bob)["transcription"].cost_usd == 0.5
