import json

from core.messages import Message, ToolCall
from core.search.engine import search_messages
from core.store.search import Filters
from core.store.transcripts import ImportedMessage

DAY = 86400.0


def seed(store, account, session, texts, *, at=1_700_000_000.0, title=None):
    user = store.users.for_account(account)
    messages = [
        ImportedMessage(role="user" if i % 2 == 0 else "assistant", content=text,
                        created_at=at + i, external_id=f"{session}-{i}")
        for i, text in enumerate(texts)
    ]
    store.transcripts.import_session(user, external_id=session, started_at=at, title=title,
                                     messages=messages)
    return user


def test_words_match_with_stemming_and_best_first(store):
    user = seed(store, "http:alice", "s1", [
        "We were deploying the billing service to production yesterday.",
        "Lunch was pasta.",
    ])
    seed(store, "http:alice", "s2", ["The weather is nice."], at=1_700_100_000.0)
    hits = search_messages(store, user, "deploy billing")
    assert [h.external_id for h in hits] == ["s1-0"]
    assert hits[0].session_id == "s1" and hits[0].role == "user"


def test_trigram_finds_substrings_and_identifiers(store):
    user = seed(store, "http:alice", "s1", [
        "the job died with ERR_CONN_RESET_BY_PEER after 30s",
        "my config lives in ~/projects/widgetfactory/settings.toml",
    ])
    assert [h.external_id for h in search_messages(store, user, "CONN_RESET")] == ["s1-0"]
    assert [h.external_id for h in search_messages(store, user, "widgetfact")] == ["s1-1"]


def test_cjk_text_is_searchable(store):
    user = seed(store, "http:alice", "s1", ["我喜欢在早上喝咖啡", "東京の天気はどうですか", "tea"])
    assert [h.external_id for h in search_messages(store, user, "喝咖啡")] == ["s1-0"]
    assert [h.external_id for h in search_messages(store, user, "咖啡")] == ["s1-0"]
    assert [h.external_id for h in search_messages(store, user, "東京の天気")] == ["s1-1"]


def test_tool_calls_and_tool_results_are_indexed(store):
    user = store.users.for_account("http:alice")
    session = store.sessions.start(user, "http:alice", "http")
    call = ToolCall(id="c1", name="terminal", arguments=json.dumps({"command": "pg_dump orders"}))
    store.messages.insert(user, session.id, [
        Message(role="user", content="back up the db"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="dump written to /var/backups/orders-2024.sql",
                tool_call_id="c1", name="terminal"),
    ], at=1.0)
    [result] = search_messages(store, user, "orders-2024.sql")
    assert result.role == "tool"
    [called] = search_messages(store, user, "pg_dump", filters=Filters(role="assistant"))
    assert "pg_dump" in called.snippet


def test_search_is_per_user(store):
    alice = seed(store, "http:alice", "a1", ["my locker code is zebra-4471"])
    bob = seed(store, "http:bob", "b1", ["nothing to see"])
    assert search_messages(store, bob, "zebra-4471 locker code") == []
    assert search_messages(store, bob, "4471") == []
    assert len(search_messages(store, alice, "4471")) == 1
    scopes = {r["scope"] for r in store.db.query(
        "SELECT m.user_id AS scope FROM messages_fts f JOIN messages m ON m.id = f.rowid"
        " WHERE messages_fts MATCH 'zebra'")}
    assert scopes == {alice}


def test_same_session_id_imported_by_two_users_stays_separate(store):
    alice = seed(store, "http:alice", "shared", ["alice likes rowing"])
    bob = seed(store, "http:bob", "shared", ["bob likes rowing"])
    [a] = search_messages(store, alice, "rowing")
    [b] = search_messages(store, bob, "rowing")
    assert a.public_session_id == b.public_session_id == "shared"
    assert a.session_id != b.session_id and "alice" in a.content and "bob" in b.content


def test_filters_session_role_and_time(store):
    user = seed(store, "http:alice", "old", ["kayak trip planning", "kayak rental booked"])
    seed(store, "http:alice", "new", ["kayak again"], at=1_700_000_000.0 + 30 * DAY)
    assert {h.public_session_id for h in search_messages(store, user, "kayak")} == {"old", "new"}
    only_new = Filters(since=1_700_000_000.0 + 29 * DAY)
    assert [h.public_session_id for h in search_messages(store, user, "kayak",
                                                         filters=only_new)] == ["new"]
    assistant = Filters(role="assistant")
    assert [h.external_id for h in search_messages(store, user, "kayak",
                                                   filters=assistant)] == ["old-1"]
    scoped = Filters(session_id="old")
    assert len(search_messages(store, user, "kayak", filters=scoped)) == 2


def test_index_follows_updates_and_deletes(store):
    user = seed(store, "http:alice", "s1", ["original wording here"])
    mid = store.db.scalar("SELECT id FROM messages WHERE user_id = ?", (user,))
    store.db.execute("UPDATE messages SET content = 'replacement text' WHERE id = ?", (mid,))
    assert search_messages(store, user, "original") == []
    assert len(search_messages(store, user, "replacement")) == 1
    store.db.execute("UPDATE messages SET compacted = 1 WHERE id = ?", (mid,))
    [hit] = search_messages(store, user, "replacement")
    assert hit.compacted
    store.db.execute("DELETE FROM messages WHERE id = ?", (mid,))
    assert search_messages(store, user, "replacement") == []
    assert store.db.scalar("SELECT count(*) FROM messages_fts_tri WHERE messages_fts_tri MATCH"
                           " 'replacement'") == 0


def test_the_best_match_leads_and_recency_breaks_ties(store):
    user = seed(store, "http:alice", "early", ["we talked about the garden fence"])
    seed(store, "http:alice", "late", ["we talked about the garden fence"],
         at=1_700_000_000.0 + 200 * DAY)
    seed(store, "http:alice", "rich", ["the garden fence is broken",
                                       "fence posts for the garden", "paint the garden fence"],
         at=1_700_000_000.0 + 100 * DAY)
    hits = search_messages(store, user, "garden fence", limit=5)
    order = [h.public_session_id for h in hits]
    assert order[0] == "rich"
    assert order.index("late") < order.index("early")


def test_a_session_with_many_matches_does_not_outrank_a_better_single_match():
    """No lift for a session's number of matches (it earned nothing on any recall set): the
    order is the messages' own scores, whichever sessions they sit in."""
    from types import SimpleNamespace

    from core.search.engine import rank

    at = 1_700_000_000.0
    messages = {
        1: SimpleNamespace(session_id="one-good-match", created_at=at),
        2: SimpleNamespace(session_id="chatty", created_at=at),
        3: SimpleNamespace(session_id="chatty", created_at=at),
        4: SimpleNamespace(session_id="chatty", created_at=at),
    }
    ranked = rank({1: 0.80, 2: 0.75, 3: 0.74, 4: 0.73}, messages, newest=at)
    assert [mid for mid, _ in ranked] == [1, 2, 3, 4]
    assert ranked[0][1] > ranked[1][1]


def test_snippet_centres_on_the_match(store):
    filler = "lorem ipsum dolor sit amet " * 40
    user = seed(store, "http:alice", "s1", [filler + "the passport number is X123" + filler])
    [hit] = search_messages(store, user, "passport")
    assert "passport" in hit.snippet and len(hit.snippet) < 260
