"""The greedy splitter Iris used before (one rendering per word added to a part): an oracle the
bisecting splitter is compared with on ordinary Markdown."""

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
    """Greedily join ``units`` with ``sep`` into strings whose size is within ``limit``."""
    out: list[str] = []
    current: str | None = None
    for unit in units:
        candidate = unit if current is None else f"{current}{sep}{unit}"
        if size(candidate) <= limit:
            current = candidate
            continue
        if current is not None:
            out.append(current)
        current = unit
    if current is not None:
        out.append(current)
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


def split_message(text: str, limit: int, render: Render) -> list[Part]:
    """Parts of at most ``limit`` UTF-16 units, both as Markdown and as rendered."""
    if limit < 64:
        raise ValueError("limit must be at least 64")
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
