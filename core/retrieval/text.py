"""Tokenising: the words of a text, and the two foldings the rankers match on."""

from __future__ import annotations

import re
import unicodedata

WORD_RE = re.compile(r"[^\W_]+")  # runs of letters and digits, in any script


def fold_accents(text: str) -> str:
    """Lowercase without diacritics (what SQLite FTS5's porter and trigram tokenizers match)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def fold_case(text: str) -> str:
    """NFKC-normalised and casefolded (accents kept)."""
    return unicodedata.normalize("NFKC", text).casefold()


def words(folded: str) -> list[str]:
    """The words of an already folded text."""
    return WORD_RE.findall(folded)
