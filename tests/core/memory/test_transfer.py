"""Hermes' MEMORY.md/USER.md format, and imports that keep going past refused entries."""

from core.memory.book import MemoryBook
from core.memory.transfer import import_entries, parse_entries, render_entries


def test_parse_and_render_round_trip():
    text = "User likes tea.\n§\nMulti-line\nentry.\n  §  \n\n§\nLast one.\n"
    entries = parse_entries(text)
    assert entries == ["User likes tea.", "Multi-line\nentry.", "Last one."]
    assert render_entries(entries) == "User likes tea.\n§\nMulti-line\nentry.\n§\nLast one.\n"
    assert parse_entries(render_entries(entries)) == entries
    assert parse_entries("") == [] and render_entries([]) == ""
    assert parse_entries("a\r\n§\r\nb") == ["a", "b"]


def test_import_reports_added_duplicates_and_refused(store, alice, limits):
    texts = ["Uses Arch Linux.", "Uses Arch Linux.", "sk-proj-7f3Kq9LmN2xR8vT4bW6yZ1aC5dE0gH key",
             "Likes long walks."]
    report = import_entries(MemoryBook(store), alice, "memory", texts, limits=limits, who="test")
    assert report.added == ["Uses Arch Linux.", "Likes long walks."]
    assert report.duplicates == ["Uses Arch Linux."]
    assert [t for t, _ in report.refused] == [texts[2]]
    assert "secret" in report.refused[0][1]
    assert report.lines()[0] == "memory: 2 added, 1 already there, 1 refused"
    assert {e.provenance for e in store.memory.entries(alice)} == {"import"}
