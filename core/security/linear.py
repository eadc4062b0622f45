"""Regular expressions that run in time linear in their input (RE2), for text from outside.

Python's ``re`` backtracks: a pattern such as ``(?:[\\w.]*/)*id_rsa`` searched over
``"cat/" * 1000`` does quadratic work, and one such scan on the event loop stalls every user of
the server. Every pattern in ``core.security`` is compiled here instead. RE2 has no
look-around assertions and no back-references; the patterns that needed them are written
without them, or check the detail in Python on each (linear-time) match.

``compile`` keeps Python's meaning of ``\\w`` and ``\\W`` (Unicode letters and digits, where
RE2's own are ASCII only). ``\\b`` stays RE2's ASCII word boundary, which only ever finds a
boundary in more places than Python would (next to a non-ASCII letter).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import re2

_WORD = r"\pL\pN_"
_FLAGS = ((re.I, "i"), (re.M, "m"), (re.S, "s"))


class Match(Protocol):
    def group(self, *groups: int | str) -> Any: ...
    def groups(self, default: Any = None) -> tuple[Any, ...]: ...
    def span(self, group: int = 0) -> tuple[int, int]: ...
    def start(self, group: int = 0) -> int: ...
    def end(self, group: int = 0) -> int: ...
    def __getitem__(self, group: int | str) -> Any: ...


class Regex(Protocol):
    @property
    def pattern(self) -> str: ...
    @property
    def groupindex(self) -> dict[str, int]: ...
    def search(self, text: str) -> Match | None: ...
    def match(self, text: str) -> Match | None: ...
    def finditer(self, text: str) -> Iterator[Match]: ...
    def findall(self, text: str) -> list[Any]: ...
    def sub(self, repl: str | Callable[[Any], str], text: str) -> str: ...


class PatternError(ValueError):
    """The pattern is not valid RE2 syntax (look-arounds and back-references are not)."""


def compile(pattern: str, flags: int = 0) -> Regex:
    """``pattern`` (Python syntax minus look-arounds and back-references) as a linear-time
    regex; ``flags`` may combine ``re.I``, ``re.M`` and ``re.S``."""
    letters = "".join(letter for flag, letter in _FLAGS if flags & flag)
    source = unicode_words(pattern)
    options = re2.Options()
    options.log_errors = False
    try:
        compiled: Regex = re2.compile(f"(?{letters}){source}" if letters else source, options)
    except re2.error as exc:
        raise PatternError(f"{pattern!r}: {exc}") from None
    return compiled


def unicode_words(pattern: str) -> str:
    """``\\w`` → ``[\\pL\\pN_]`` and ``\\W`` → ``[^\\pL\\pN_]`` (inside a class: its members)."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            if escaped == "w":
                out.append(_WORD if in_class else f"[{_WORD}]")
            elif escaped == "W":
                if in_class:
                    raise PatternError(f"{pattern!r}: \\W inside a character class")
                out.append(f"[^{_WORD}]")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
            out.append(char)
            i += 1
            for opener in ("^", "]"):  # "[]...]" and "[^]...]": a literal ] first
                if i < len(pattern) and pattern[i] == opener:
                    out.append(opener)
                    i += 1
            continue
        if char == "]" and in_class:
            in_class = False
        out.append(char)
        i += 1
    return "".join(out)


def first(
    pattern: Regex, text: str, accept: Callable[[Match], bool] | None = None
) -> Match | None:
    """The first match of ``pattern`` in ``text`` that ``accept`` (a check RE2 cannot express,
    such as two groups being equal) approves."""
    for match in pattern.finditer(text):
        if accept is None or accept(match):
            return match
    return None
