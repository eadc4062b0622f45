"""Markdown → the Markdown Teams renders in a bot's message (``textFormat: markdown``): bold,
italic, strike-through, code, fenced code blocks, links, quotes and lists; headings become bold
lines. ``<`` and ``>`` are written as entities so text a model quotes cannot form HTML tags
(Teams reads ``<at>`` mention tags in bots' messages)."""

from __future__ import annotations

from core.platforms.markdown import Block
from core.platforms.render import Dialect, render
from core.platforms.render import render_block as render_in


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


ZERO_WIDTH = "\u200b"


def _code_block(body: str, lang: str) -> str:
    safe = body.replace("```", "`" + ZERO_WIDTH + "``")  # a fence inside would end the block
    return f"```{lang}\n{safe}\n```"


def _link(text: str, url: str) -> str:
    label = _escape(text).replace("[", "(").replace("]", ")")
    return url if text.strip() == url else f"[{label}]({url.replace(')', '%29')})"


TEAMS = Dialect(
    escape=_escape,
    code=lambda s: f"`{s.replace('`', '')}`",
    link=_link,
    bold=lambda s: f"**{s}**",
    italic=lambda s: f"*{s}*",
    strike=lambda s: f"~~{s}~~",
    code_block=_code_block,
    heading=lambda s: f"**{s}**",
    quote_line=lambda s: f"> {s}",
    bullet="- ",
)


def render_block(block: Block) -> str:
    return render_in(block, TEAMS)


def to_teams(markdown: str) -> str:
    return render(markdown, TEAMS)
