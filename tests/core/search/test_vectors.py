"""Where message vectors come from (turns, import, reindex, searches) and how they are kept."""

import asyncio
import json
import subprocess
import sys

from click.testing import CliRunner

from core.messages import InboundMessage
from core.search import embed
from core.store.search import Filters
from core.store.transcripts import ImportedMessage
from functions.ingress import receive
from local_dev.cli import cli


def send(rt, text, pmid, account="http:alice"):
    message = InboundMessage(platform="http", chat_id="alice", account=account,
                             platform_message_id=pmid, text=text)

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def seed(store, account, texts, session="s1"):
    user = store.users.for_account(account)
    store.transcripts.import_session(user, external_id=session, started_at=1e9, title=None,
                                     messages=[ImportedMessage(role="user", content=t,
                                                               created_at=1e9 + i)
                                               for i, t in enumerate(texts)])
    return user


def test_a_committed_turn_gets_vectors(runtime, scripted):
    scripted.then("Marine biology sounds fascinating.")
    entry = send(runtime, "I graduated with a degree in marine biology", "1")
    store = runtime.store
    stored = store.messages.for_session(entry.user_id, entry.session_id)
    assert [m.message.role for m in stored] == ["user", "assistant"]
    assert store.vectors.count_missing(entry.user_id, embed.FULL) == 0
    assert store.vectors.counts(entry.user_id) == {embed.FULL: 2}
    other = store.users.for_account("http:bob")
    assert store.vectors.counts(other) == {}


def test_put_only_writes_the_users_own_messages(store):
    alice = seed(store, "http:alice", ["alpha"])
    bob = seed(store, "http:bob", ["beta"])
    [bob_message] = store.vectors.missing(bob, None, limit=10)
    assert store.vectors.put(alice, embed.FULL, {bob_message.id: [b"\x01" * 384]}) == 0
    assert store.vectors.counts(bob) == {} and store.vectors.counts(alice) == {}


def test_vectors_follow_edits_and_deletes(store):
    user = seed(store, "http:alice", ["first text", "second text", ""])
    assert embed.backfill(store, user) == 3
    assert store.vectors.count_missing(user, embed.FULL) == 0
    assert len(store.vectors.rows(user, embed.FULL).message_ids) == 2  # the empty one: a marker
    first, second, _ = store.messages.for_session(user, store.search.resolve_session(user, "s1"))
    store.db.execute("UPDATE messages SET content = 'changed' WHERE id = ?", (first.id,))
    assert [m.id for m in store.vectors.missing(user, embed.FULL, limit=10)] == [first.id]
    store.db.execute("UPDATE messages SET compacted = 1 WHERE id = ?", (second.id,))
    assert store.vectors.count_missing(user, embed.FULL) == 1  # compaction keeps vectors
    store.db.execute("DELETE FROM messages WHERE id = ?", (second.id,))
    assert second.id not in store.vectors.rows(user, embed.FULL).message_ids
    assert store.vectors.rows(user, embed.FULL, Filters(role="assistant")).message_ids == []


def iris(*args):
    return CliRunner().invoke(cli, list(args))


def history(tmp_path):
    path = tmp_path / "h.jsonl"
    lines = [{"user": "alice", "session_id": "s1", "started_at": "2024-05-01T10:00:00Z",
              "messages": [{"role": "user", "content": "We finally adopted a beagle puppy.",
                            "id": "m1"},
                           {"role": "assistant", "content": "Congratulations!", "id": "m2"}]},
             {"user": "bob", "session_id": "s1", "started_at": "2024-05-01T10:00:00Z",
              "messages": [{"role": "user", "content": "My flat is in Lisbon.", "id": "m3"}]}]
    path.write_text("\n".join(json.dumps(x) for x in lines))
    return path


def test_import_then_reindex(store, tmp_path):
    result = iris("sessions", "import", str(history(tmp_path)), "--embed", "fast")
    assert result.exit_code == 0, result.output
    assert "static (fast) vectors for 3 messages of 2 users" in result.output
    alice = store.users.resolve("alice")
    assert store.vectors.counts(alice) == {embed.STATIC: 2}
    found = json.loads(iris("sessions", "search", "Which dog did we get?", "--user", "alice",
                            "--json").output)
    assert found[0]["external_id"] == "m1" and "semantic" in found[0]["matched"]

    result = iris("sessions", "reindex", "--user", "alice")
    assert result.exit_code == 0, result.output
    assert "full-model vectors for 2 messages of 1 users" in result.output
    assert store.vectors.counts(alice) == {embed.FULL: 2}
    bob = store.users.resolve("bob")
    assert store.vectors.counts(bob) == {embed.STATIC: 1}
    assert "for 0 messages" in iris("sessions", "reindex", "--user", "alice").output
    assert "for 2 messages" in iris("sessions", "reindex", "--user", "alice", "--force").output


def test_import_without_vectors_and_bad_search_input(store, tmp_path):
    result = iris("sessions", "import", str(history(tmp_path)), "--embed", "none")
    assert result.exit_code == 0 and "vectors" not in result.output
    assert store.vectors.counts(store.users.resolve("alice")) == {}
    empty = iris("sessions", "search", "  ", "--user", "alice")
    assert empty.exit_code == 2 and "give some words to search for" in empty.output
    assert iris("sessions", "import", str(history(tmp_path)), "--embed", "slow").exit_code == 2


def test_the_ack_path_loads_no_numpy_tokenizers_or_model():
    code = (
        "import sys, functions.app, functions.http_api, functions.ingress, functions.runtime,"
        " functions.search_api, core.store, core.config, core.search.engine;"
        "print(sorted(m for m in ('numpy', 'tokenizers', 'core.search.encoder',"
        " 'core.search.embed', 'core.search.static') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
