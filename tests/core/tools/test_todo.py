"""todo: a per-session task list the model keeps, replaced or merged by id."""

import pytest

from tests.core.acting.support import call, make_ctx


def test_write_merge_and_read(ctx):
    out = call(ctx, "todo", todos=[{"id": "1", "content": "Fetch the tide tables"},
                                   {"id": "2", "content": "Plot them"}])
    assert out == "Tasks (0/2 done):\n[ ] 1. Fetch the tide tables\n[ ] 2. Plot them"
    out = call(ctx, "todo", merge=True, todos=[
        {"id": "1", "content": "Fetch the tide tables", "status": "completed"},
        {"id": "3", "content": "Send the chart", "status": "in_progress"}])
    assert out.splitlines() == ["Tasks (1/3 done):", "[x] 1. Fetch the tide tables",
                                "[ ] 2. Plot them", "[~] 3. Send the chart"]
    assert call(ctx, "todo") == out
    assert call(ctx, "todo", todos=[]) == "No tasks."


def test_bad_lists_change_nothing(ctx):
    call(ctx, "todo", todos=[{"id": "1", "content": "keep me"}])
    out = call(ctx, "todo", todos=[{"id": "a", "content": "x"}, {"id": "a", "content": "y"}])
    assert out == "Error: two tasks share an id; give each task its own id"
    assert "Error: invalid arguments for todo" in call(ctx, "todo", todos=[
        {"id": "1", "content": "x", "status": "someday"}])
    assert call(ctx, "todo").endswith("[ ] 1. keep me")


@pytest.mark.parametrize("other", ["session", "user"])
def test_each_session_has_its_own_list(ctx, store, settings, other):
    call(ctx, "todo", todos=[{"id": "1", "content": "mine"}])
    them = make_ctx(store, settings, "http:bob" if other == "user" else "http:alice")
    assert call(them, "todo") == "No tasks."
