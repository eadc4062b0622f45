"""One Markdown renderer for every platform; each platform gives a ``Dialect``, the table of how
its markup writes bold, links, code, quotes and headings and how plain text is escaped.

Replies are rendered one block at a time (``core.platforms.markdown``), so a long reply split
between blocks still renders on its own in every part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.platforms.inline import emphasis, inline_spans
from core.platforms.markdown import BULLET, QUOTE, RULE, Block, heading, split_blocks

Wrap = Callable[[str], str]


def _same(text: str) -> str:
    return text


@dataclass(frozen=True, kw_only=True)
class Dialect:
    escape: Wrap  # any plain text
    code: Wrap  # an inline code span (given raw)
    link: Callable[[str, str], str]  # (text, url), given raw
    bold: Wrap
    italic: Wrap
    strike: Wrap
    code_block: Callable[[str, str], str]  # (body, language), given raw
    heading: Wrap  # an already rendered heading line
    text: Wrap | None = None  # text under emphasis, when it escapes differently from `escape`
    quote_line: Wrap | None = None  # one rendered quoted line, e.g. "> …"
    quote_group: Callable[[list[str]], str] | None = None  # consecutive quoted lines together
    bullet: str = "• "
    rule: str = "——————"


def inline(text: str, dialect: Dialect) -> str:
    out: list[str] = []
    for span in inline_spans(text):
        if span.kind == "code":
            out.append(dialect.code(span.text))
        elif span.kind == "link":
            out.append(dialect.link(span.text, span.url))
        else:
            out.append(emphasis((dialect.text or dialect.escape)(span.text), bold=dialect.bold,
                                italic=dialect.italic, strike=dialect.strike))
    return "".join(out)


def render_block(block: Block, dialect: Dialect) -> str:
    if block.code:
        return dialect.code_block(block.body, block.lang)
    lines: list[str] = []
    quote: list[str] = []

    def end_quote() -> None:
        if quote and dialect.quote_group is not None:
            lines.append(dialect.quote_group(quote))
        quote.clear()

    for line in block.text.split("\n"):
        if match := QUOTE.match(line):
            quoted = inline(match.group(1), dialect)
            if dialect.quote_group is not None:
                quote.append(quoted)
            else:
                lines.append((dialect.quote_line or _same)(quoted))
            continue
        end_quote()
        if RULE.match(line):
            lines.append(dialect.rule)
        elif (title := heading(line)) is not None:
            lines.append(dialect.heading(inline(title, dialect)))
        elif match := BULLET.match(line):
            lines.append(f"{match.group(1)}{dialect.bullet}{inline(match.group(2), dialect)}")
        else:
            lines.append(inline(line, dialect))
    end_quote()
    return "\n".join(lines)


def render(markdown: str, dialect: Dialect) -> str:
    return "\n\n".join(render_block(block, dialect) for block in split_blocks(markdown))
