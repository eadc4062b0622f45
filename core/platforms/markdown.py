"""A small Markdown reader shared by the platform formatters and the message splitter.

Replies are Markdown as models write it. The text is cut into blocks (paragraphs, separated by
blank lines, and fenced code blocks, kept whole); each formatter renders one block at a time, so
a long reply can be split between blocks and every part still renders on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")

# Inline spans that are taken whole, before any emphasis: code spans and links.
CODE_SPAN = r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
LINK = r"\[(?P<link_text>[^\]\n]+)\]\((?P<url>(?:https?://|mailto:|tg://)[^\s)]+)\)"
INLINE = re.compile(f"{CODE_SPAN}|{LINK}")

BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
ITALIC = re.compile(
    r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])|(?<![\w])_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)"
)
STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")


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
        fence = FENCE.match(line)
        if fence:
            marker = fence.group(1)
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(marker):
                end += 1
            flush()
            body = "\n".join(lines[i + 1:end])
            blocks.append(code_block(body, fence.group(2)))
            i = end + 1
            continue
        if line.strip():
            prose.append(line)
        else:
            flush()
        i += 1
    flush()
    return blocks


@dataclass(frozen=True)
class Span:
    kind: str  # text | code | link
    text: str
    url: str = ""


def inline_spans(text: str) -> Iterator[Span]:
    """Code spans and links whole; the rest as text for emphasis."""
    at = 0
    for match in INLINE.finditer(text):
        if match.start() > at:
            yield Span("text", text[at:match.start()])
        if match.group("code"):
            yield Span("code", match.group("code_text"))
        else:
            yield Span("link", match.group("link_text"), match.group("url"))
        at = match.end()
    if at < len(text):
        yield Span("text", text[at:])


def emphasis(
    text: str, *, bold: Callable[[str], str], italic: Callable[[str], str],
    strike: Callable[[str], str],
) -> str:
    """Apply bold, strike and italic; matched pairs only, so the output is always balanced."""
    marks: list[str] = []

    def hold(rendered: str) -> str:
        marks.append(rendered)
        return f"\x00{len(marks) - 1}\x00"

    def inner(value: str) -> str:
        return re.sub(r"\x00(\d+)\x00", lambda m: marks[int(m.group(1))], value)

    text = BOLD.sub(lambda m: hold(bold(inner(m.group(1) or m.group(2)))), text)
    text = STRIKE.sub(lambda m: hold(strike(inner(m.group(1)))), text)
    text = ITALIC.sub(lambda m: hold(italic(inner(m.group(1) or m.group(2)))), text)
    return inner(text)


def utf16_len(text: str) -> int:
    """Length as Telegram and Slack count it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2
