"""Short excerpts of a message around the words a query matched."""

from __future__ import annotations

import re

SUFFIXES = ("ing", "ed", "es", "s", "ly", "er", "ion", "ions", "ment", "al")


def stem_prefix(word: str) -> str:
    """A crude stem used only to find where a word occurs (the index itself uses porter)."""
    word = word.lower()
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _positions(text: str, words: list[str]) -> list[tuple[int, str]]:
    lower = text.lower()
    found: list[tuple[int, str]] = []
    for word in words:
        needle = stem_prefix(word)
        if not needle:
            continue
        for match in re.finditer(re.escape(needle), lower):
            found.append((match.start(), needle))
    return sorted(found)


def snippet(text: str, words: list[str], width: int = 240) -> str:
    """The ``width``-character window of ``text`` holding the most distinct query words."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    positions = _positions(flat, words)
    if not positions:
        return flat[: width - 1].rstrip() + "…"
    best_start, best_count = positions[0][0], 0
    for i, (start, _) in enumerate(positions):
        distinct = {w for pos, w in positions[i:] if pos < start + width * 2 // 3}
        if len(distinct) > best_count:
            best_start, best_count = start, len(distinct)
    begin = max(0, best_start - width // 3)
    end = min(len(flat), begin + width)
    begin = max(0, end - width)
    if begin > 0:
        space = flat.find(" ", begin)
        begin = space + 1 if 0 <= space < begin + 20 else begin
    piece = flat[begin:end].strip()
    return ("…" if begin > 0 else "") + piece + ("…" if end < len(flat) else "")
