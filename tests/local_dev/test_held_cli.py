"""`iris memory|skills pending|approve|reject`: held writes decided from the terminal."""

import pytest
from click.testing import CliRunner

from core.asking.confirm import hold_memory_write, hold_skill_write
from core.config import load_settings
from core.memory.models import MemoryOperation
from core.store import open_store
from local_dev.cli import cli
from tests.core.acting.support import make_ctx

SKILL = "---\nname: tidy-notes\ndescription: Tidy meeting notes.\n---\nSort by date.\n"


@pytest.fixture
def iris(monkeypatch):
    monkeypatch.setenv("USER", "tester")
    runner = CliRunner()

    def run(*args, code=0):
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result.output

    return run


@pytest.fixture
def held(iris):
    iris("memory", "show", "--user", "http:alice", code=1)  # creates the home and database
    store = open_store(load_settings())
    store.users.for_account("http:alice")
    ctx = make_ctx(store, load_settings(), "http:alice")
    ctx.tainted_by.add("read_file")
    op = MemoryOperation(action="add", target="user", content="Works late on Fridays.")
    hold_memory_write(ctx, [op], "agent", None)
    hold_skill_write(ctx, {"action": "create", "name": "tidy-notes", "content": SKILL})
    yield store
    store.close()


def test_pending_lists_each_kind_and_approve_saves(iris, held):
    listing = iris("memory", "pending", "--user", "http:alice")
    assert "#1: add to user: 'Works late on Fridays.'" in listing
    assert "untrusted content (read_file)" in listing
    assert "#2" in iris("skills", "pending", "--user", "http:alice")

    assert iris("memory", "approve", "1", "--user", "http:alice").startswith("Saved #1.")
    user_id = held.users.resolve("http:alice")
    (entry,) = held.memory.entries(user_id)
    assert entry.content == "Works late on Fridays." and "confirmed by" in entry.author

    assert iris("skills", "reject", "all", "--user", "http:alice") == (
        "Dropped #2; it was not saved.\n")
    assert "No skill writes are waiting" in iris("skills", "pending", "--user", "http:alice")


def test_a_bad_number_is_one_clear_line_and_changes_nothing(iris, held):
    output = iris("memory", "approve", "one", "--user", "http:alice", code=1)
    assert "give held write numbers" in output
    assert iris("memory", "approve", "2", "--user", "http:alice") == (
        "There is no held memory write #2.\n")  # #2 is a skill write
    assert len(held.held_writes.pending(held.users.resolve("http:alice"))) == 2
