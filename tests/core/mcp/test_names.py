from __future__ import annotations

import re

from core.mcp.client import MAX_NAME_LENGTH, qualified_name

SAFE = re.compile(r"[A-Za-z0-9_-]+")


def test_plain_names_are_kept():
    assert qualified_name("time", "get_current_time", set()) == "mcp__time__get_current_time"


def test_unsafe_characters_become_underscores():
    name = qualified_name("git-hub", "repos.list/all files", set())
    assert name == "mcp__git-hub__repos_list_all_files"


def test_long_names_are_cut_to_the_limit_and_stay_distinct():
    tool_a = "summarise_" + "a" * 80
    tool_b = "summarise_" + "a" * 79 + "b"
    first = qualified_name("server", tool_a, set())
    second = qualified_name("server", tool_b, {first})
    for name in (first, second):
        assert len(name) <= MAX_NAME_LENGTH
        assert SAFE.fullmatch(name)
        assert name.startswith("mcp__server__summarise_")
    assert first != second


def test_names_that_clash_after_sanitising_are_made_unique():
    taken: set[str] = set()
    names = []
    for tool in ("read.file", "read/file", "read file", "read_file"):
        name = qualified_name("fs", tool, taken)
        taken.add(name)
        names.append(name)
    assert names[0] == "mcp__fs__read_file"
    assert len(set(names)) == 4
    assert all(SAFE.fullmatch(n) and len(n) <= MAX_NAME_LENGTH for n in names)


def test_same_input_gives_the_same_name():
    assert qualified_name("a", "b.c", {"mcp__a__b_c"}) == qualified_name(
        "a", "b.c", {"mcp__a__b_c"}
    )
