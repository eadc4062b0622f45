"""Inline Markdown of one line: code spans and links, then bold, strike and italic.

Every opener finds its closer through an index built once per line (the backtick runs, the next
``]``, the sorted closers of each marker), never by scanning ahead from each opener, so a line of
unclosed or nested markup (``![`` or ``[`` repeated, ``*_``, lone backticks) costs time in
proportion to its length. The rules are those of the regular expressions the renderer used
before (a code span closes at the first run of as many backticks, emphasis pairs take the
nearest closer, bold sits inside strike inside italic), without their backtracking.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Wrap = Callable[[str], str]

SCHEMES = ("https://", "http://", "mailto:", "tg://")
_TICKS = re.compile(r"`+")
_MARK = re.compile(r"[`\[]")
_LINK_END = re.compile(r"[\]\n]")
_URL_END = re.compile(r"[\s)]")
_SINGLE = re.compile(r"[*_]")
NODE = "\x00"  # stands for an already rendered span while the next kind of emphasis is found


@dataclass(frozen=True)
class Span:
    kind: str  # text | code | link
    text: str
    url: str = ""


class _Links:
    """``[text](url)`` at a ``[``. Every ``[`` before the same ``]`` shares that ``]``'s answer,
    which is worked out once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.close = -2  # the next "]" (or "\n") after the last "[" asked about; -1: none
        self.url: tuple[str, int] | None = None  # (url, end of the link) after self.close
        self.stop_from = self.stop_at = -1  # the last url end found, and where its search began

    def at(self, i: int) -> Span | None:
        t = self.text
        if self.close != -1 and self.close <= i:
            found = _LINK_END.search(t, i + 1)
            self.close = found.start() if found else -1
            self.url = self._url(self.close) if found and found.group() == "]" else None
        if self.close == -1 or self.close == i + 1 or self.url is None:
            return None
        return Span("link", t[i + 1:self.close], self.url[0])

    def end(self) -> int:
        assert self.url is not None
        return self.url[1]

    def _url(self, close: int) -> tuple[str, int] | None:
        t = self.text
        start = close + 2
        if t[close + 1:start] != "(":
            return None
        scheme = next((s for s in SCHEMES if t.startswith(s, start)), None)
        if scheme is None:
            return None
        body = start + len(scheme)
        stop = self._stop(body)
        if stop == body or stop == len(t) or t[stop] != ")":
            return None
        return t[start:stop], stop + 1

    def _stop(self, body: int) -> int:
        """The first whitespace or ``)`` at or after ``body``; later links reuse the answer."""
        if not self.stop_from <= body <= self.stop_at:
            found = _URL_END.search(self.text, body)
            self.stop_from, self.stop_at = body, found.start() if found else len(self.text)
        return self.stop_at


def inline_spans(text: str) -> Iterator[Span]:
    """Code spans and links whole, the rest as text for emphasis; ``text`` is one line."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    longest_after = [0] * (len(runs) + 1)  # longest run among runs[k:]
    for k in range(len(runs) - 1, -1, -1):
        longest_after[k] = max(runs[k][1] - runs[k][0], longest_after[k + 1])
    links = _Links(text)
    run = 0
    at = pos = 0
    while (found := _MARK.search(text, pos)) is not None:
        i = found.start()
        span: Span | None
        if text[i] == "`":
            while runs[run][1] <= i:
                run += 1
            span, end = _code_span(text, i, runs, run, longest_after)
        else:
            span = links.at(i)
            end = links.end() if span is not None else i + 1
        if span is None:
            pos = i + 1
            continue
        if i > at:
            yield Span("text", text[at:i])
        yield span
        at = pos = end
    if at < len(text):
        yield Span("text", text[at:])


def _code_span(text: str, i: int, runs: list[tuple[int, int]], run: int,
               longest_after: list[int]) -> tuple[Span | None, int]:
    """The longest opening run at ``i`` that is closed later, closed at the first place it
    can be: inside its own run, or at the first later run at least as long."""
    r = runs[run][1] - i
    inside = (r - 1) // 2  # the longest opener the rest of its own run can close
    m = min(r, max(longest_after[run + 1], inside))
    if m < 1:
        return None, i + 1
    if m <= inside:
        close = i + m + 1
    else:
        later = run + 1
        while runs[later][1] - runs[later][0] < m:
            later += 1
        close = runs[later][0]
    return Span("code", text[i + m:close]), close + m


@dataclass(frozen=True)
class _Work:
    """Text with each span already rendered replaced by ``NODE`` (a character that is neither
    space, word nor marker, as the rendered span is to its neighbours)."""

    text: str
    nodes: tuple[tuple[int, str], ...] = ()  # (position in text, rendered), in order


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _pairs(s: str, marks: dict[str, Wrap]) -> list[tuple[int, int, int, int, Wrap]]:
    """``**x**``-like pairs (two-character markers): an opener not followed by space, closed
    by the nearest marker not preceded by space, at least one character later."""
    closers: dict[str, list[int]] = {}
    openers: list[tuple[int, str]] = []
    for mark in marks:
        closers[mark] = []
        p = s.find(mark)
        while p != -1:
            if p + 2 < len(s) and not s[p + 2].isspace():
                openers.append((p, mark))
            if p > 0 and not s[p - 1].isspace():
                closers[mark].append(p)
            p = s.find(mark, p + 1)
    openers.sort()
    found: list[tuple[int, int, int, int, Wrap]] = []
    pos = 0
    for i, mark in openers:
        if i < pos:
            continue
        ends = closers[mark]
        k = bisect_left(ends, i + 3)
        if k < len(ends):
            found.append((i, i + 2, ends[k], ends[k] + 2, marks[mark]))
            pos = ends[k] + 2
    return found


def _singles(s: str, star: Wrap, underscore: Wrap) -> list[tuple[int, int, int, int, Wrap]]:
    """``*x*`` and ``_x_``: not inside a word (``snake_case``, ``2*3*4``), not ``**``."""

    def joins(ch: str, neighbour: str) -> bool:  # the marker is part of a word or a run
        return _is_word(neighbour) or (ch == "*" and neighbour == "*")

    closers: dict[str, list[int]] = {"*": [], "_": []}
    openers: list[int] = []
    for marker in _SINGLE.finditer(s):
        i, ch = marker.start(), marker.group()
        before, after = s[i - 1:i], s[i + 1:i + 2]
        if not (before and joins(ch, before)) and after and not after.isspace() and after != ch:
            openers.append(i)
        if before and not before.isspace() and before != ch and not (after and joins(ch, after)):
            closers[ch].append(i)
    wraps = {"*": star, "_": underscore}
    found: list[tuple[int, int, int, int, Wrap]] = []
    pos = 0
    for i in openers:
        if i < pos:
            continue
        ch = s[i]
        ends = closers[ch]
        k = bisect_left(ends, i + 2)
        if k < len(ends):
            found.append((i, i + 1, ends[k], ends[k] + 1, wraps[ch]))
            pos = ends[k] + 1
    return found


def _replace(work: _Work, matches: list[tuple[int, int, int, int, Wrap]]) -> _Work:
    """Each match rendered (its content with the nodes inside expanded) and made one node."""
    s, old = work.text, work.nodes
    out: list[str] = []
    nodes: list[tuple[int, str]] = []
    size = at = k = 0
    for start, inner_start, inner_end, end, wrap in matches:
        while k < len(old) and old[k][0] < start:
            nodes.append((old[k][0] - at + size, old[k][1]))
            k += 1
        out.append(s[at:start])
        size += start - at
        pieces: list[str] = []
        c = inner_start
        while k < len(old) and old[k][0] < end:
            p, rendered = old[k]
            pieces += [s[c:p], rendered]
            c = p + 1
            k += 1
        pieces.append(s[c:inner_end])
        nodes.append((size, wrap("".join(pieces))))
        out.append(NODE)
        size += 1
        at = end
    while k < len(old):
        nodes.append((old[k][0] - at + size, old[k][1]))
        k += 1
    out.append(s[at:])
    return _Work("".join(out), tuple(nodes))


def _expand(work: _Work) -> str:
    out: list[str] = []
    at = 0
    for p, rendered in work.nodes:
        out += [work.text[at:p], rendered]
        at = p + 1
    out.append(work.text[at:])
    return "".join(out)


def emphasis(text: str, *, bold: Wrap, italic: Wrap, strike: Wrap) -> str:
    """Apply bold, strike and italic; matched pairs only, so the output is always balanced.
    Bold is found first and is opaque to the later kinds (``**~~x~~**`` stays strike marks
    in bold); strike may hold bold, italic may hold both."""
    if "*" not in text and "_" not in text and "~" not in text:
        return text
    work = _Work(text)
    work = _replace(work, _pairs(work.text, {"**": bold, "__": bold}))
    work = _replace(work, _pairs(work.text, {"~~": strike}))
    work = _replace(work, _singles(work.text, italic, italic))
    return _expand(work)
