"""/link: two accounts on two platforms become one user; the absorbed user's memory, sessions,
messages, usage, archive, inbox and objects move, and nothing is lost."""

import pytest

from core.clock import ManualClock
from core.errors import IrisUsageError
from core.identity.access import check_access
from core.identity.accounts import MAX_FAILURES
from core.identity.linking import LINK_SECONDS, Links
from core.identity.merge import merge_users
from core.memory.book import Limits, MemoryBook
from core.memory.ops import Author
from iris_testing.scripted_model import call, tool_calls
from tests.clocks import NOW
from tests.core.identity.helpers import deliver, message
from tests.core.memory.helpers import op

TABLES = ("messages", "sessions", "usage", "inbox", "memory_archive", "memory_entries")


def counts(store, user):
    return {t: store.db.scalar(f"SELECT count(*) FROM {t} WHERE user_id = ?", (user,))
            for t in TABLES}


@pytest.fixture
def rt(runtime):
    runtime.settings = runtime.settings.model_copy(
        update={"telegram_access": "allowlist", "telegram_allow": ["42"]})
    return runtime


def code_from(reply):
    return reply.split("Your link code is ", 1)[1].split(" ", 1)[0]


def test_link_from_http_to_telegram_merges_everything(rt, scripted):
    scripted.then(
        tool_calls(call("memory", action="add", target="user", content="Name: Dana.")), "Hi Dana.",
        tool_calls(call("memory", action="add", content="Laptop runs macOS 15.")), "Noted.",
        tool_calls(call("memory", action="add", content="Old laptop fact.")), "ok",
        tool_calls(call("memory", action="remove", old_text="Old laptop")), "ok",
    )
    _, first = deliver(rt, message("telegram:42", "I'm Dana, remember that"))
    dana = first.user_id
    _, laptop_turn = deliver(rt, message("http:dana-laptop", "my laptop runs macOS 15"))
    laptop = laptop_turn.user_id
    deliver(rt, message("http:dana-laptop", "note an old laptop fact"))
    deliver(rt, message("http:dana-laptop", "forget the old laptop fact"))
    before = {t: a + b for (t, a), b in zip(counts(rt.store, dana).items(),
                                             counts(rt.store, laptop).values(), strict=True)}
    calls_before = rt.store.usage.totals(dana).calls + rt.store.usage.totals(laptop).calls

    _, issued = deliver(rt, message("telegram:42", "/link"))
    code = code_from(issued.reply)
    _, linked = deliver(rt, message("http:dana-laptop", f"/link {code}"))
    assert linked.reply.startswith("Linked http:dana-laptop with telegram:42")

    store = rt.store
    assert store.users.resolve("http:dana-laptop") == dana
    assert store.users.resolve(laptop) == dana
    assert store.users.get(laptop).merged_into == dana
    assert store.users.accounts(dana) == ["telegram:42", "http:dana-laptop"]
    after = counts(store, dana)
    assert after["memory_entries"] == before["memory_entries"]
    assert after["memory_archive"] == before["memory_archive"] == 1
    for table in ("messages", "sessions", "usage"):
        assert after[table] == before[table], table
    assert after["inbox"] == before["inbox"] + 2  # the two /link messages
    assert counts(store, laptop) == dict.fromkeys(TABLES, 0)
    assert store.usage.totals(dana).calls == calls_before
    assert Links(store).get(code).status == "merged"

    scripted.then("Welcome back.")
    deliver(rt, message("http:dana-laptop", "/new"))
    deliver(rt, message("http:dana-laptop", "hello"))
    prompt = scripted.requests[-1][0].content
    assert "Name: Dana." in prompt and "Laptop runs macOS 15." in prompt


def test_an_unknown_slack_account_can_link_through_pairing(rt, scripted):
    scripted.then(tool_calls(call("memory", action="add", content="Prefers Postgres.")), "ok")
    _, first = deliver(rt, message("telegram:42", "remember: I prefer Postgres"))
    denied = check_access(rt.store, rt.settings, message("slack:T1/U9", "hello"))
    assert not denied.allowed and "pairing code" in denied.reply
    _, issued = deliver(rt, message("telegram:42", "/link"))
    decision, linked = deliver(rt, message("slack:T1/U9", f"/link {code_from(issued.reply)}"))
    assert decision.allowed and linked.reply.startswith("Linked slack:T1/U9 with telegram:42")
    assert rt.store.users.resolve("slack:T1/U9") == first.user_id
    assert check_access(rt.store, rt.settings, message("slack:T1/U9", "hi")).allowed
    scripted.then("Hi from Slack.")
    _, later = deliver(rt, message("slack:T1/U9", "hi"))
    assert later.user_id == first.user_id
    assert "Prefers Postgres." in scripted.requests[-1][0].content


def test_wrong_link_codes_lock_an_account_out(rt):
    store, settings = rt.store, rt.settings
    for attempt in range(1, MAX_FAILURES):
        reply = check_access(store, settings, message("slack:T1/U666", "/link ABCDEFGH")).reply
        assert f"{MAX_FAILURES - attempt} attempt" in reply
    locked = check_access(store, settings, message("slack:T1/U666", "/link ABCDEFGH")).reply
    assert "locked out" in locked
    owner = store.users.for_account("telegram:42")
    code = Links(store).issue(owner, "telegram:42").code
    still = check_access(store, settings, message("slack:T1/U666", f"/link {code}"))
    assert not still.allowed and "Try again after" in still.reply
    assert Links(store).get(code).status == "pending"


def test_link_codes_expire_and_cannot_join_a_user_to_itself(settings):
    from core.store import open_store

    store = open_store(settings, clock=ManualClock(NOW))
    owner = store.users.for_account("telegram:42")
    links = Links(store)
    code = links.issue(owner, "telegram:42").code
    with pytest.raises(IrisUsageError, match="already belongs to the same user"):
        links.redeem(code, account="telegram:42", user_id=owner)
    other = store.users.for_account("http:x")
    store.clock.advance(LINK_SECONDS + 1)
    with pytest.raises(IrisUsageError, match="has expired"):
        links.redeem(code, account="http:x", user_id=other)
    group = store.users.for_account("telegram:-100", kind="group")
    with pytest.raises(IrisUsageError, match="not in a group"):
        links.issue(group, "telegram:-100")
    fresh = links.issue(owner, "telegram:42").code
    with pytest.raises(IrisUsageError, match="not in a group"):
        links.redeem(fresh, account="telegram:7", user_id=group)
    assert links.get(fresh).status == "pending"


def test_merge_keeps_duplicates_and_overflow_in_the_archive(store):
    a, b = store.users.for_account("telegram:1"), store.users.for_account("slack:T/U")
    small = Limits(memory=110, user=100)
    author = Author(provenance="agent", who="x")
    for user, texts in ((a, ["Shared fact about deploys.", "A's fact number one here."]),
                        (b, ["Shared fact about deploys.", "B's first fact about things.",
                             "B's second fact about more things."])):
        for text in texts:
            MemoryBook(store).write(user, [op("add", text)], limits=small, author=author)
    report = merge_users(store, a, b, limits=small, who="test")
    kept = {e.content for e in store.memory.entries(a)}
    archived = {(x.content, x.reason) for x in store.memory.list_archive(a, limit=50)}
    everything = {"Shared fact about deploys.", "A's fact number one here.",
                  "B's first fact about things.", "B's second fact about more things."}
    assert kept | {c for c, _ in archived} == everything
    assert ("Shared fact about deploys.", "duplicate (account link)") in archived
    assert any(reason == "overflow (account link)" for _, reason in archived)
    assert MemoryBook(store).usage(a, small)["memory"].chars <= 110
    assert report.memory == {"entries moved": 2, "duplicates archived": 1,
                             "overflow archived": report.memory["overflow archived"]}
    assert store.memory.versions(b) == {"memory": 0, "user": 0}


def test_merge_moves_every_table_and_object_and_reports_what_cannot_move(store):
    a, b = store.users.for_account("telegram:1"), store.users.for_account("slack:T/U")
    store.db.execute("CREATE TABLE later_feature (user_id TEXT NOT NULL, payload TEXT)")
    store.db.execute("INSERT INTO later_feature VALUES (?, 'b data')", (b,))
    for user in (a, b):
        store.db.execute(
            "INSERT INTO skills (user_id, name, description, origin, provenance, version,"
            " created_at, updated_at) VALUES (?, 'deploy', 'd', 'agent', 'agent', 1, 0, 0)",
            (user,))
    store.objects.put(a, "notes/a.txt", b"from a")
    store.objects.put(b, "notes/a.txt", b"from b")
    store.objects.put(b, "notes/b.txt", b"only b")
    report = merge_users(store, a, b, limits=Limits(2200, 1375), who="test")
    assert store.db.scalar("SELECT user_id FROM later_feature") == a
    assert report.left_behind == {"skills": 1}
    assert store.db.scalar("SELECT count(*) FROM skills WHERE user_id = ?", (b,)) == 1
    assert store.objects.get(a, "notes/b.txt").data == b"only b"
    assert store.objects.get(a, "notes/a.txt").data == b"from a"
    assert store.objects.get(b, "notes/a.txt").data == b"from b"
    assert report.objects_moved == 1 and report.objects_left == ["notes/a.txt"]
    text = "\n".join(report.lines())
    assert f"kept under {b}" in text and "skills 1" in text


def test_groups_and_already_merged_users_cannot_be_merged(store):
    a, b = store.users.for_account("telegram:1"), store.users.for_account("telegram:2")
    group = store.users.for_account("telegram:-100", kind="group")
    with pytest.raises(IrisUsageError, match="group scope"):
        merge_users(store, a, group, limits=Limits(2200, 1375), who="t")
    merge_users(store, a, b, limits=Limits(2200, 1375), who="t")
    with pytest.raises(IrisUsageError, match="already merged"):
        merge_users(store, a, b, limits=Limits(2200, 1375), who="t")
