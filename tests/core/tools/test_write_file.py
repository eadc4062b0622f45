import os

import pytest

from tests.core.acting.support import call


def test_creates_files_and_parent_directories(ctx, workspace):
    out = call(ctx, "write_file", path="src/app/main.py", content="print('hi')\n")
    assert out == "Created src/app/main.py (12 bytes)."
    assert (workspace / "src/app/main.py").read_text() == "print('hi')\n"


def test_replacing_a_file_says_so(ctx, workspace):
    call(ctx, "write_file", path="a.txt", content="one two three")
    out = call(ctx, "write_file", path="a.txt", content="four")
    assert out == "Replaced a.txt: 13 bytes before, 4 bytes now."
    assert (workspace / "a.txt").read_text() == "four"


def test_unicode_round_trips(ctx):
    call(ctx, "write_file", path="grüße.txt", content="日本語 ✓\n")
    assert "日本語 ✓" in call(ctx, "read_file", path="grüße.txt")


def test_a_directory_is_not_overwritten(ctx, workspace):
    (workspace / "dir").mkdir()
    (workspace / "dir" / "keep.txt").write_text("keep")
    assert call(ctx, "write_file", path="dir", content="x") == "Error: 'dir' is a directory"
    assert (workspace / "dir" / "keep.txt").read_text() == "keep"
    assert "does not name a file" in call(ctx, "write_file", path="..", content="x")


@pytest.mark.parametrize("path", ["../escape.txt", "/tmp/iris-escape.txt", "out/evil.txt"])
def test_writes_outside_the_workspace_are_refused(ctx, workspace, tmp_path, path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, workspace / "out")
    out = call(ctx, "write_file", path=path, content="pwned")
    assert out.startswith("Error: refused:") and "outside the workspace" in out
    assert not (workspace.parent / "escape.txt").exists()
    assert not os.path.exists("/tmp/iris-escape.txt")
    assert list(outside.iterdir()) == []


def test_a_symlinked_file_pointing_out_is_not_followed(ctx, workspace, tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text("original")
    os.symlink(target, workspace / "victim.txt")
    out = call(ctx, "write_file", path="victim.txt", content="overwritten")
    assert "outside the workspace" in out
    assert target.read_text() == "original"


def test_missing_content_is_a_clear_error(ctx, workspace):
    out = call(ctx, "write_file", path="x.txt")
    assert out.startswith("Error: invalid arguments for write_file: content")
    assert not (workspace / "x.txt").exists()
