"""Markdown → Google Chat's message text formatting: ``*bold*``, ``_italic_``, ``~strike~``,
inline ```code```, fenced code blocks, bullet lists, and links as ``<url|text>``. Headings become
bold lines. Chat has no escape character, so text is sent as written; a link's label loses the
``|``, ``<`` and ``>`` that would end it."""

from __future__ import annotations

from core.platforms.markdown import Block
from core.platforms.render import Dialect, render
from core.platforms.render import render_block as render_in

ZERO_WIDTH = "\u200b"


def _same(text: str) -> str:
    return text


def _link(text: str, url: str) -> str:
    if text.strip() == url:
        return url
    label = text.replace("|", "/").replace(">", ")").replace("<", "(")
    return f"<{url.replace('|', '%7C').replace('>', '%3E')}|{label}>"


def _code_block(body: str, lang: str) -> str:
    safe = body.replace("```", "`" + ZERO_WIDTH + "``")  # a fence inside would end the block
    return f"```\n{safe}\n```"


GOOGLECHAT = Dialect(
    escape=_same,
    code=lambda s: f"`{s.replace('`', '')}`",
    link=_link,
    bold=lambda s: f"*{s}*",
    italic=lambda s: f"_{s}_",
    strike=lambda s: f"~{s}~",
    code_block=_code_block,
    heading=lambda s: f"*{s}*",
    quote_line=lambda s: f"> {s}",
    bullet="• ",
)


def render_block(block: Block) -> str:
    return render_in(block, GOOGLECHAT)


def to_googlechat(markdown: str) -> str:
    return render(markdown, GOOGLECHAT)
