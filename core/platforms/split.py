"""Split a long reply into parts that each fit a platform's message limit, on paragraph
boundaries where possible (then lines, then words, then characters). A code block cut in two is
closed and reopened, so each part renders on its own. The split is deterministic: a retried
delivery cuts the same text into the same parts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.platforms.markdown import Block, code_block, split_blocks, utf16_len

Render = Callable[[Block], str]


@dataclass(frozen=True)
class Part:
    markdown: str  # sent as plain text when the formatted version is refused
    rendered: str


def _size(block: Block, render: Render) -> int:
    return max(utf16_len(block.text), utf16_len(render(block)))


def _cut_word(word: str, limit: int, size: Callable[[str], int]) -> list[str]:
    pieces: list[str] = []
    while word:
        n = min(len(word), limit)
        while n > 1 and size(word[:n]) > limit:
            n = max(1, n * 3 // 4)
        pieces.append(word[:n])
        word = word[n:]
    return pieces


def _pack(units: list[str], sep: str, limit: int, size: Callable[[str], int]) -> list[str]:
    """Join ``units`` with ``sep`` into strings whose size is within ``limit``, each taking as
    many units as fit. The Markdown length bounds the search (a string is never smaller than
    its Markdown), then bisection finds the most units whose rendering fits, so each string is
    rendered a few times, not once per unit. A unit too big on its own stands alone."""
    widths = [utf16_len(unit) for unit in units]
    gap = utf16_len(sep)
    out: list[str] = []
    start = 0
    while start < len(units):
        end, width = start + 1, widths[start]
        while end < len(units) and width + gap + widths[end] <= limit:
            width += gap + widths[end]
            end += 1
        if size(sep.join(units[start:end])) > limit:
            fits, over = start + 1, end  # units[start:fits] is taken even if it does not fit
            while over - fits > 1:
                middle = (fits + over) // 2
                if size(sep.join(units[start:middle])) <= limit:
                    fits = middle
                else:
                    over = middle
            end = fits
        out.append(sep.join(units[start:end]))
        start = end
    return out


def _fit_line(line: str, limit: int, size: Callable[[str], int]) -> list[str]:
    if size(line) <= limit:
        return [line]
    words: list[str] = []
    for word in line.split(" "):
        words.extend([word] if size(word) <= limit else _cut_word(word, limit, size))
    return _pack(words, " ", limit, size)


def _fit(block: Block, limit: int, render: Render) -> list[Block]:
    """``block`` as one or more blocks that each fit."""
    if _size(block, render) <= limit:
        return [block]
    if block.code:
        def code_size(body: str) -> int:
            return _size(code_block(body, block.lang), render)

        lines: list[str] = []
        for line in block.body.split("\n"):
            lines.extend(_fit_line(line, limit, code_size))
        return [code_block(body, block.lang) for body in _pack(lines, "\n", limit, code_size)]

    def prose_size(text: str) -> int:
        return _size(Block(text=text), render)

    lines = []
    for line in block.text.split("\n"):
        lines.extend(_fit_line(line, limit, prose_size))
    return [Block(text=text) for text in _pack(lines, "\n", limit, prose_size)]


def _memo(render: Render) -> Render:
    """``render`` remembering its answers: a block is measured, then grouped, then sent."""
    seen: dict[Block, str] = {}

    def rendered(block: Block) -> str:
        if (known := seen.get(block)) is None:
            known = seen[block] = render(block)
        return known

    return rendered


def split_message(text: str, limit: int, render: Render) -> list[Part]:
    """Parts of at most ``limit`` UTF-16 units, both as Markdown and as rendered. The time taken
    grows in proportion to the text: blocks are split first, then each piece is rendered."""
    if limit < 64:
        raise ValueError("limit must be at least 64")
    render = _memo(render)
    blocks = [piece for block in split_blocks(text) for piece in _fit(block, limit, render)]
    parts: list[list[Block]] = []
    used = 0
    for block in blocks:
        size = _size(block, render)
        if parts and used + 2 + size <= limit:
            parts[-1].append(block)
            used += 2 + size
        else:
            parts.append([block])
            used = size
    return [
        Part(
            markdown="\n\n".join(b.text for b in group),
            rendered="\n\n".join(render(b) for b in group),
        )
        for group in parts
    ]
