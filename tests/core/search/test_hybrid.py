import pytest

from core.search import embed
from core.search.engine import search_messages
from core.search.hybrid import admission, fuse, names_identifier, semantic_scale
from core.store.search import Filters
from core.store.transcripts import ImportedMessage
from iris_testing.growth import assert_linear

AT = 1_700_000_000.0


def seed(store, account, session, texts, *, at=AT, embed_now=True):
    user = store.users.for_account(account)
    store.transcripts.import_session(user, external_id=session, started_at=at, title=None,
                                     messages=[
        ImportedMessage(role="user" if i % 2 == 0 else "assistant", content=text,
                        created_at=at + i, external_id=f"{session}-{i}")
        for i, text in enumerate(texts)
    ])
    if embed_now:
        embed.backfill(store, user)
    return user


HISTORY = [
    "Back when I graduated with my degree in Marine Biology I never thought I'd end up in sales.",
    "That's quite a change of direction!",
    "Can you suggest a good pasta recipe for four people?",
    "Try a simple cacio e pepe: pecorino, black pepper and spaghetti.",
    "My laptop crashed with ERR_DISK_FULL_0x7E again during the backup.",
    "Free some space and run the backup again.",
    "The disk on my laptop keeps filling up when the backup runs overnight.",
    "Move old photos to external storage.",
]


def test_a_paraphrase_sharing_no_word_is_found(store):
    user = seed(store, "http:alice", "s1", HISTORY)
    question = "What did I study at university?"
    assert search_messages(store, user, question, semantic=False) == []
    hits = search_messages(store, user, question, limit=3)
    assert hits[0].external_id == "s1-0"
    assert hits[0].signals == ("semantic",)
    assert hits[0].to_json(1)["matched"] == ["semantic"]


def test_an_exact_identifier_still_ranks_first(store):
    user = seed(store, "http:alice", "s1", HISTORY)
    hits = search_messages(store, user, "ERR_DISK_FULL_0x7E")
    assert hits[0].external_id == "s1-4"
    assert "lexical" in hits[0].signals
    assert all("lexical" in h.signals for h in hits)  # identifiers admit no meaning-only hits


def test_both_signals_are_reported_and_lift_a_message(store):
    user = seed(store, "http:alice", "s1", HISTORY)
    hits = search_messages(store, user, "laptop storage problems during backups", limit=4)
    assert hits[0].external_id in ("s1-4", "s1-6")
    assert hits[0].signals == ("lexical", "semantic")


def test_vector_search_is_per_user(store):
    alice = seed(store, "http:alice", "a1", HISTORY[:2])
    bob = seed(store, "http:bob", "b1", ["I bought a new kettle.", "Nice!"])
    found = embed.neighbours(store, bob, "What did I study at university?").best(lambda s: s)
    bob_ids = {m.id for m in store.messages.for_session(bob, store.search.resolve_session(
        bob, "b1"))}
    assert found and set(found) <= bob_ids
    assert search_messages(store, bob, "What did I study at university?") == []
    assert search_messages(store, alice, "What did I study at university?")[0].external_id \
        == "a1-0"
    assert store.vectors.rows(bob, embed.FULL).message_ids
    assert not set(store.vectors.rows(bob, embed.FULL).message_ids) & set(
        store.vectors.rows(alice, embed.FULL).message_ids)


def test_semantic_candidates_respect_filters(store):
    user = seed(store, "http:alice", "s1", HISTORY)
    seed(store, "http:alice", "s2", ["I have a master's degree in oceanography.", "Cool."],
         at=AT + 40 * 86400)
    question = "What did I study at university?"
    both = {h.public_session_id for h in search_messages(store, user, question, limit=5)}
    assert both == {"s1", "s2"}
    newer = search_messages(store, user, question, filters=Filters(since=AT + 30 * 86400))
    assert {h.public_session_id for h in newer} == {"s2"}
    assistant = search_messages(store, user, question, filters=Filters(role="assistant"))
    assert all(h.role == "assistant" for h in assistant)


def test_a_search_embeds_missing_messages_a_few_at_a_time(store):
    user = seed(store, "http:alice", "s1", [f"note {i} about the garden" for i in range(20)]
                + HISTORY, embed_now=False)
    assert store.vectors.count_missing(user, None) == 28
    hits = search_messages(store, user, "What did I study at university?")
    assert store.vectors.count_missing(user, None) == 28 - embed.BACKFILL_MESSAGES
    assert hits and hits[0].external_id == "s1-20"  # the newest messages come first
    search_messages(store, user, "anything")
    assert store.vectors.count_missing(user, None) == 0


def test_bad_queries(store):
    user = seed(store, "http:alice", "s1", HISTORY[:2])
    assert search_messages(store, user, "") == []
    assert search_messages(store, user, "   \n\t ") == []
    assert search_messages(store, user, "?!…") == []
    assert_linear(lambda words: search_messages(store, user, "degree biology " * words),
                  small=2_500, large=20_000, scale=8, what="a query of 40,000 words")
    hits = search_messages(store, user, "degree biology " * 20_000)
    assert hits[0].external_id == "s1-0"


def test_without_the_model_search_is_lexical(store, monkeypatch):
    user = seed(store, "http:alice", "s1", HISTORY, embed_now=False)
    monkeypatch.setattr(embed, "_available", False)
    assert search_messages(store, user, "What did I study at university?") == []
    [hit] = search_messages(store, user, "pasta recipe")
    assert hit.signals == ("lexical",)
    assert store.vectors.count_missing(user, None) == len(HISTORY)


@pytest.mark.parametrize(("text", "expected"), [
    ("ERR_CONN_RESET", True), ("0x8BADF00D", True), ("myVariable", True), ("v2.3.1", True),
    ("settings.toml", True), ("zebra-4471", True), ('"exact words"', True), ("gpt4o", True),
    ("What did I study at university?", False), ("my 3rd race in the 1950s", False),
    ("a 10km run", False), ("half-marathon plan", False),
])
def test_identifier_queries(text, expected):
    assert names_identifier(text) is expected


def test_admission_bar_depends_on_query_length():
    assert admission("ERR_CONN_RESET") is None
    assert admission("bike") > admission("gravel bike") > admission("which bike did I buy?")


def test_semantic_scale_and_fusion():
    assert semantic_scale({1: 0.1, 2: 0.05}) == {}  # nothing above the floor
    weak = semantic_scale({1: 0.25, 2: 0.2})
    assert 0 < weak[1] < 0.5  # a faint best neighbour does not get full weight
    strong = semantic_scale({1: 0.7, 2: 0.4, 3: 0.1})
    assert strong[1] == 1.0 and 0 < strong[2] < 1 and 3 not in strong
    many = semantic_scale({i: 0.9 - i / 1000 for i in range(300)}, k=100)
    assert len(many) == 100
    fused = fuse({1: 4.0, 2: 2.0}, {2: 1.0, 3: 0.5}, 0.5)
    assert fused == {1: 0.5, 2: 0.75, 3: 0.25}


def test_a_malformed_vector_is_skipped_and_a_failing_encoder_falls_back_to_words(
        store, monkeypatch):
    user = seed(store, "http:alice", "s1", HISTORY)
    store.db.execute("UPDATE message_vectors SET vector = x'0102' WHERE message_id = ("
                     "SELECT min(message_id) FROM message_vectors WHERE user_id = ?)", (user,))
    hits = search_messages(store, user, "cacio e pepe pasta for four", limit=3)
    assert hits[0].external_id in ("s1-2", "s1-3") and "semantic" in hits[0].signals

    def broken(model=embed.FULL):
        raise RuntimeError("model files unreadable")

    monkeypatch.setattr(embed, "encoder", broken)
    [hit] = search_messages(store, user, "pasta recipe")
    assert hit.external_id == "s1-2" and hit.signals == ("lexical",)
