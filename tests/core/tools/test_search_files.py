import pytest

from tests.core.acting.support import call

pytestmark = pytest.mark.process  # its tools run shells or processes


@pytest.fixture
def workspace(ctx, iris_home):
    path = iris_home / "workspaces" / ctx.user_id
    (path / "src" / "pkg").mkdir(parents=True)
    (path / "src" / "pkg" / "core.py").write_text("import os\n\ndef TODO_fix():\n    pass\n")
    (path / "src" / "main.py").write_text("# TODO: write main\n")
    (path / "README.md").write_text("TODO list\n")
    (path / ".git").mkdir()
    (path / ".git" / "config").write_text("TODO in git\n")
    (path / "image.bin").write_bytes(b"TODO\x00\x00binary")
    return path


def test_content_search_lists_path_line_text(ctx, workspace):
    out = call(ctx, "search_files", pattern="TODO")
    assert out.startswith('<untrusted source="search_files">')
    assert "3 matching lines:" in out
    for line in ("src/pkg/core.py:3:def TODO_fix():", "src/main.py:1:# TODO: write main",
                 "README.md:1:TODO list"):
        assert line in out
    assert ".git" not in out and "image.bin" not in out


def test_glob_and_path_narrow_the_search(ctx, workspace):
    out = call(ctx, "search_files", pattern="TODO", glob="*.py", path="src")
    assert "2 matching lines:" in out and "README" not in out
    out = call(ctx, "search_files", pattern=r"def \w+\(", path="src/pkg/core.py")
    assert "src/pkg/core.py:3:def TODO_fix():" in out


def test_listing_files_by_glob(ctx, workspace):
    out = call(ctx, "search_files", glob="*.py")
    assert "2 files:\nsrc/main.py\nsrc/pkg/core.py" in out


def test_no_matches_bad_regex_and_nothing_to_find(ctx, workspace):
    assert "No matches for pattern 'FIXME'" in call(ctx, "search_files", pattern="FIXME")
    assert "grep could not search" in call(ctx, "search_files", pattern="(unclosed")
    assert "give a pattern" in call(ctx, "search_files", path="src")


def test_results_are_capped(ctx, workspace):
    (workspace / "many.txt").write_text("hit\n" * 500)
    out = call(ctx, "search_files", pattern="hit", max_results=10)
    assert "10 matching lines:" in out and "490 more not shown" in out


def test_outside_and_missing_paths(ctx, workspace):
    assert "outside the workspace" in call(ctx, "search_files", pattern="root", path="/etc")
    assert "outside the workspace" in call(ctx, "search_files", pattern="x", path="../..")
    assert "no such directory" in call(ctx, "search_files", pattern="x", path="nowhere")


def test_quoting_keeps_the_pattern_a_pattern(ctx, workspace):
    out = call(ctx, "search_files", pattern="'; touch hacked; echo '")
    assert "No matches" in out
    assert not (workspace / "hacked").exists()
