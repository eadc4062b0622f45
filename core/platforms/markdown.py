"""A small Markdown reader shared by the platform formatters and the message splitter.

Replies are Markdown as models write it. The text is cut into blocks (paragraphs, separated by
blank lines, and fenced code blocks, kept whole); each formatter renders one block at a time, so
a long reply can be split between blocks and every part still renders on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_FENCE_START = re.compile(r"\s{0,3}(`{3,}|~{3,})")
_LANG = re.compile(r"[\w+#.-]*")
_HEADING_START = re.compile(r"\s{0,3}#{1,6}\s+")


def fence(line: str) -> tuple[str, str] | None:
    """``(marker, language)`` of a line that opens a fenced code block."""
    match = _FENCE_START.match(line)
    if match is None:
        return None
    rest = line[match.end():].strip()
    lang = _LANG.match(rest)
    assert lang is not None  # it matches the empty string
    return (match.group(1), rest) if lang.end() == len(rest) else None


def heading(line: str) -> str | None:
    """The text of a heading line (``# Title ##``), or None."""
    match = _HEADING_START.match(line)
    if match is None:
        return None
    return line[match.end():].rstrip().rstrip("#").rstrip()


@dataclass(frozen=True)
class Block:
    text: str  # the block's Markdown source
    code: bool = False
    lang: str = ""
    body: str = ""  # a code block's content, without its fences


def code_block(body: str, lang: str = "") -> Block:
    return Block(text=f"```{lang}\n{body}\n```", code=True, lang=lang, body=body)


def split_blocks(text: str) -> list[Block]:
    """Paragraphs and fenced code blocks, in order; blank lines only separate."""
    blocks: list[Block] = []
    prose: list[str] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")

    def flush() -> None:
        if any(line.strip() for line in prose):
            blocks.append(Block(text="\n".join(prose).strip("\n")))
        prose.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        opened = fence(line)
        if opened:
            marker, lang = opened
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(marker):
                end += 1
            flush()
            body = "\n".join(lines[i + 1:end])
            blocks.append(code_block(body, lang))
            i = end + 1
            continue
        if line.strip():
            prose.append(line)
        else:
            flush()
        i += 1
    flush()
    return blocks


def utf16_len(text: str) -> int:
    """Length as Telegram and Slack count it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2
