"""Marking the words a search matched in a snippet, as (text, matched) pieces a template
escapes and wraps: no markup is built from stored text."""

from __future__ import annotations

import re

from core.search.snippets import stem_prefix

MAX_WORDS = 12


def pieces(text: str, query: str) -> list[tuple[str, bool]]:
    stems = {stem_prefix(w) for w in re.findall(r"\w+", query)[:MAX_WORDS]}
    stems = {s for s in stems if len(s) >= 2}
    if not stems:
        return [(text, False)]
    pattern = re.compile(
        r"\b(?:" + "|".join(re.escape(s) for s in sorted(stems, key=len, reverse=True))
        + r")\w*", re.IGNORECASE,
    )
    out: list[tuple[str, bool]] = []
    at = 0
    for match in pattern.finditer(text):
        if match.start() > at:
            out.append((text[at:match.start()], False))
        out.append((match.group(0), True))
        at = match.end()
    if at < len(text):
        out.append((text[at:], False))
    return out
