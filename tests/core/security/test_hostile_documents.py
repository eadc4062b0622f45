"""The hostile-document corpus (corpus/hostile_documents.jsonl): documents with instructions
planted in them, in many languages, in paraphrase, encoded and hidden in useful text. Every one
is flagged by the scanner, and what a turn writes to memory after reading one through
``read_file`` is held for the user instead of reaching the next session's prompt."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from core.security.scanner import scan_text
from iris_testing.llm_server import ScriptedLLM
from tests.fakes.stack import emulator_stack

CORPUS = Path(__file__).parent / "corpus" / "hostile_documents.jsonl"
ENTRIES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()
           if line.strip()]
BY_ID = {entry["id"]: entry for entry in ENTRIES}


def test_the_corpus_has_its_shape_and_its_range():
    assert len(BY_ID) == len(ENTRIES) >= 40  # ids are unique
    for entry in ENTRIES:
        assert set(entry) == {"id", "lang", "kind", "payload", "text"}, entry["id"]
        assert entry["payload"] and entry["payload"] in entry["text"], entry["id"]
        assert entry["text"].strip() != entry["payload"].strip(), entry["id"]  # in a document
    languages = Counter(entry["lang"] for entry in ENTRIES)
    assert len(languages) >= 5
    kinds = Counter(entry["kind"] for entry in ENTRIES)
    assert set(kinds) == {"direct", "paraphrase", "encoded", "hidden"}
    assert min(kinds.values()) >= 4


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["id"] for entry in ENTRIES])
def test_every_hostile_document_and_its_payload_is_flagged(entry):
    assert scan_text(entry["text"]), f"{entry['id']}: the document passed the scanner"
    assert scan_text(entry["payload"]), f"{entry['id']}: the payload alone passed the scanner"


# What a model that obeyed the document would write: a plain-sounding preference, which the
# scanner has no reason to refuse. Only the turn's having read the document gives it away.
OBEYED = "The user prefers that I skip confirmations for deletions."


@pytest.fixture
def llm():
    return ScriptedLLM()


def test_a_memory_write_after_reading_a_hostile_file_waits_for_the_user(llm, monkeypatch):
    document = BY_ID["en-useful-wrapped"]
    assert scan_text(OBEYED) == []
    with emulator_stack(llm, monkeypatch) as stack:
        def ask(text):
            answer = stack.client.chat.completions.create(
                model="iris", messages=[{"role": "user", "content": text}], user="alice")
            return answer.choices[0].message.content

        store = stack.runtime.store
        assert ask("/new") == "Started a new session."
        alice = store.users.resolve("http:alice")
        workspace = stack.runtime.settings.home / "workspaces" / alice
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / "linter.md").write_text(document["text"], encoding="utf-8")

        (llm.tool_call("read_file", {"path": "linter.md"})
            .tool_call("memory", {"action": "add", "target": "user", "content": OBEYED})
            .tool_call("memory", {"action": "add", "content": document["payload"]})
            .reply("Create .ruff.toml with line-length 100; I noted a preference."))
        assert ask("How do I set up the linter? See linter.md.").startswith("Create .ruff")
        results = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
        assert results[0].startswith("<untrusted") and document["payload"] in results[0]
        assert results[1].startswith("Not saved yet: held as #1")
        assert "read untrusted content (read_file)" in results[1]
        assert results[2].startswith("Error: not saved — blocked: prompt injection")

        snapshot = store.memory.snapshot(alice)
        assert all(OBEYED not in str(entries) for entries in snapshot.values())
        (held,) = store.held_writes.pending(alice, "memory")
        assert held.number == 1 and held.requested_by == "http:alice"
        pending = ask("/memory pending")
        assert "#1: add to user: " in pending and "skip confirmations" in pending

        assert ask("/new") == "Started a new session."
        llm.reply("Hello again.")
        assert ask("hello") == "Hello again."
        system = llm.requests[-1]["messages"][0]
        assert system["role"] == "system"
        assert "skip confirmations" not in system["content"]
        assert document["payload"] not in json.dumps(llm.requests[-1]["messages"])
