"""Markdown → Discord's Markdown. Discord reads most of what models write (``**bold**``,
``*italic*``, ``~~strike~~``, code, quotes, masked links in bot messages); headings become bold
lines so a reply reads the same in every client. Mentions are never parsed from a reply (the
sender sends ``allowed_mentions: {"parse": []}``), so text is not escaped."""

from __future__ import annotations

from core.platforms.markdown import Block
from core.platforms.render import Dialect, render
from core.platforms.render import render_block as render_in


def _same(text: str) -> str:
    return text


ZERO_WIDTH = "\u200b"


def _code_block(body: str, lang: str) -> str:
    safe = body.replace("```", "`" + ZERO_WIDTH + "``")  # a fence inside would end the block
    return f"```{lang}\n{safe}\n```"


def _link(text: str, url: str) -> str:
    label = text.replace("[", "(").replace("]", ")")
    return url if label.strip() == url else f"[{label}](<{url}>)"


DISCORD = Dialect(
    escape=_same,
    code=lambda s: f"`{s}`" if "`" not in s else f"`` {s} ``",
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
    return render_in(block, DISCORD)


def to_discord(markdown: str) -> str:
    return render(markdown, DISCORD)
