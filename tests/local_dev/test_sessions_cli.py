"""`iris sessions …` through click, on the test's own IRIS_HOME database."""

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from local_dev.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def write_history(path):
    lines = [
        {"user": "alice", "session_id": "s1", "started_at": "2024-05-01T10:00:00Z",
         "title": "Sourdough", "messages": [
             {"role": "user", "content": "My starter smells like acetone", "id": "a1"},
             {"role": "assistant", "content": "Feed it more often.", "id": "a2"}]},
        {"user": "bob", "session_id": "s2", "started_at": "2024-05-02T10:00:00Z",
         "messages": [{"role": "user", "content": "acetone is a solvent", "id": "b1"}]},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")


def iris(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input)


def test_import_search_list_show_export(tmp_path):
    history = tmp_path / "history.jsonl"
    write_history(history)
    result = iris("sessions", "import", str(history))
    assert result.exit_code == 0, result.output
    assert "imported 2 sessions (3 messages) for 2 users" in result.output
    assert "0 sessions" in iris("sessions", "import", str(history)).output

    found = iris("sessions", "search", "acetone smell", "--user", "alice", "--json")
    hits = json.loads(found.output)
    assert [h["external_id"] for h in hits] == ["a1"] and hits[0]["session_id"] == "s1"
    text = iris("sessions", "search", "acetone", "--user", "alice")
    assert "s1" in text.output and "starter smells like acetone" in text.output

    listing = iris("sessions", "list", "--user", "alice")
    assert "s1" in listing.output and "Sourdough" in listing.output and "s2" not in listing.output
    assert "s2" in iris("sessions", "list").output
    shown = iris("sessions", "show", "s1")
    assert "# Sourdough" in shown.output and "Feed it more often." in shown.output

    out = tmp_path / "train.jsonl"
    exported = iris("sessions", "export", "--format", "sharegpt", "--user", "alice",
                    "-o", str(out))
    assert exported.exit_code == 0
    [record] = [json.loads(x) for x in out.read_text().splitlines()]
    assert record["conversations"][0] == {"from": "human",
                                          "value": "My starter smells like acetone"}
    since = iris("sessions", "export", "--format", "openai-jsonl", "--since", "2024-05-02")
    assert [json.loads(x)["messages"][0]["content"] for x in since.stdout.splitlines()] == [
        "acetone is a solvent"]


def test_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"user": "a", "session_id": "s", "started_at": "x", "messages": []}\n')
    result = iris("sessions", "import", str(bad))
    assert result.exit_code == 1
    assert result.output.strip().startswith("error: ") and "bad.jsonl:1: started_at" in \
        result.output
    assert iris("sessions", "search", "x", "--user", "ghost").exit_code == 1
    assert "no session" in iris("sessions", "show", "nope").output


def test_the_installed_entry_point_reads_stdin(tmp_path):
    history = tmp_path / "history.jsonl"
    write_history(history)
    run = subprocess.run(
        [sys.executable, "-m", "local_dev.cli", "sessions", "import", "-"],
        input=history.read_text(), capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert run.returncode == 0, run.stderr
    searched = subprocess.run(
        [sys.executable, "-m", "local_dev.cli", "sessions", "search", "solvent", "--user", "bob",
         "--json"], capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert json.loads(searched.stdout)[0]["external_id"] == "b1"


def test_search_without_user_searches_as_iris_chat_does(tmp_path, monkeypatch):
    monkeypatch.setenv("USER", "alice")  # `iris chat` talks as http:$USER
    history = tmp_path / "history.jsonl"
    write_history(history)
    assert iris("sessions", "import", str(history)).exit_code == 0
    found = iris("sessions", "search", "acetone", "--json")
    assert found.exit_code == 0, found.output
    assert [h["external_id"] for h in json.loads(found.output)] == ["a1"]
    monkeypatch.setenv("USER", "nobody")
    missing = iris("sessions", "search", "acetone")
    assert missing.exit_code == 1 and "no user or account 'http:nobody'" in missing.output


def test_search_lists_what_the_ranking_and_the_recall_bench_list(tmp_path):
    """`iris sessions search` returns search_messages' hits, in its order (what
    bench/search_retrieval.py measures): the matched question, not the answer next to it."""
    from core.config import load_settings
    from core.search.engine import search_messages
    from core.store import open_store

    history = tmp_path / "chat.jsonl"
    history.write_text(json.dumps(
        {"user": "cleo", "session_id": "c1", "started_at": "2018-04-24T14:00:00Z", "messages": [
            {"role": "assistant", "name": "Marcus", "content": "So what is your major again?",
             "id": "c1-0"},
            {"role": "user", "content": "Applied and computational mathematics.", "id": "c1-1"},
            {"role": "assistant", "name": "Marcus", "content": "Mine is IT, a major pain.",
             "id": "c1-2"}]}) + "\n")
    assert iris("sessions", "import", str(history), "--embed", "none").exit_code == 0
    found = iris("sessions", "search", "what did I say my major was", "--user", "cleo",
                 "--json")
    assert found.exit_code == 0, found.output
    listed = [(h["external_id"], h["matched"]) for h in json.loads(found.output)]
    store = open_store(load_settings())
    try:
        user_id = store.users.resolve("http:cleo")
        ranked = search_messages(store, user_id, "what did I say my major was")
    finally:
        store.close()
    assert listed == [(h.external_id, list(h.signals)) for h in ranked]
    assert {"c1-0", "c1-2"} <= {external for external, _ in listed}
    assert "c1-1" not in {external for external, _ in listed}
