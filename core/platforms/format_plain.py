"""Markdown → plain text, for platforms that show no markup (LINE, SMS): emphasis marks are
dropped, links become ``text (url)``, code is shown as written, quotes keep ``> `` and lists
``- ``."""

from __future__ import annotations

from core.platforms.markdown import Block
from core.platforms.render import Dialect, render
from core.platforms.render import render_block as render_in


def _same(text: str) -> str:
    return text


def _link(text: str, url: str) -> str:
    bare = url.removeprefix("mailto:")
    return url if text.strip() in (url, bare) else f"{text} ({url})"


PLAIN = Dialect(
    escape=_same,
    code=_same,
    link=_link,
    bold=_same,
    italic=_same,
    strike=_same,
    code_block=lambda body, lang: body,
    heading=_same,
    quote_line=lambda s: f"> {s}",
    bullet="- ",
)


def render_block(block: Block) -> str:
    return render_in(block, PLAIN)


def to_plain(markdown: str) -> str:
    return render(markdown, PLAIN)
