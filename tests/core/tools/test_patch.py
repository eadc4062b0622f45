import asyncio

from core.messages import ToolCall
from core.tools import default_toolset
from tests.core.acting.support import call

SOURCE = "def greet(name):\n    return 'hello ' + name\n\n\nprint(greet('world'))\n"


def test_replaces_one_occurrence_and_shows_the_diff(ctx, workspace):
    (workspace / "app.py").write_text(SOURCE)
    out = call(ctx, "patch", path="app.py", old_string="'hello '", new_string="'hi '")
    assert "Replaced 1 occurrence in app.py." in out
    assert "-    return 'hello ' + name\n+    return 'hi ' + name" in out
    assert (workspace / "app.py").read_text() == SOURCE.replace("'hello '", "'hi '")


def test_ambiguous_match_changes_nothing(ctx, workspace):
    (workspace / "a.txt").write_text("x = 1\nx = 1\n")
    out = call(ctx, "patch", path="a.txt", old_string="x = 1", new_string="x = 2")
    assert "occurs 2 times" in out and "replace_all" in out
    assert (workspace / "a.txt").read_text() == "x = 1\nx = 1\n"
    out = call(ctx, "patch", path="a.txt", old_string="x = 1", new_string="x = 2",
               replace_all=True)
    assert "Replaced 2 occurrences" in out
    assert (workspace / "a.txt").read_text() == "x = 2\nx = 2\n"


def test_not_found_points_at_whitespace(ctx, workspace):
    (workspace / "app.py").write_text(SOURCE)
    out = call(ctx, "patch", path="app.py", old_string="return  'hello '  + name", new_string="")
    assert "was not found" in out and "different whitespace" in out
    out = call(ctx, "patch", path="app.py", old_string="goodbye", new_string="x")
    assert "was not found" in out and "whitespace" not in out
    assert (workspace / "app.py").read_text() == SOURCE


def test_bad_requests(ctx, workspace):
    (workspace / "a.txt").write_text("same")
    assert "the same" in call(ctx, "patch", path="a.txt", old_string="same", new_string="same")
    assert "invalid arguments" in call(ctx, "patch", path="a.txt", old_string="",
                                       new_string="x")
    assert "no such file" in call(ctx, "patch", path="b.txt", old_string="a", new_string="b")
    assert "outside the workspace" in call(ctx, "patch", path="/etc/hosts", old_string="a",
                                           new_string="b")
    (workspace / "bin").write_bytes(b"\x00abc")
    assert "binary file" in call(ctx, "patch", path="bin", old_string="abc", new_string="x")
    (workspace / "latin1.txt").write_bytes("café".encode("latin-1"))
    assert "not valid UTF-8" in call(ctx, "patch", path="latin1.txt", old_string="caf",
                                     new_string="tea")
    assert (workspace / "latin1.txt").read_bytes() == "café".encode("latin-1")


def test_parallel_patches_to_one_file_both_land(ctx, workspace):
    (workspace / "list.txt").write_text("alpha\nbeta\ngamma\n")
    calls = [
        ToolCall(id=f"c{n}", name="patch",
                 arguments=f'{{"path": "list.txt", "old_string": "{old}", "new_string": "{new}"}}')
        for n, (old, new) in enumerate([("alpha", "ALPHA"), ("gamma", "GAMMA")])
    ]
    results = asyncio.run(default_toolset().call_all(ctx, calls))
    assert all("Replaced 1 occurrence" in r.content for r in results)
    assert (workspace / "list.txt").read_text() == "ALPHA\nbeta\nGAMMA\n"
