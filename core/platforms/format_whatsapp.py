"""Markdown → WhatsApp's markup: ``*bold*``, ``_italic_``, ``~strike~``, ```` ```mono``` ````,
inline ```code```, ``> quote`` and ``- `` lists. WhatsApp has no link markup (it shows a bare
URL as a link), so ``[text](url)`` becomes ``text (url)``, and it has no escape character, so
plain text is sent as written."""

from __future__ import annotations

from core.platforms.markdown import Block
from core.platforms.render import Dialect, render
from core.platforms.render import render_block as render_in


def _same(text: str) -> str:
    return text


def _link(text: str, url: str) -> str:
    bare = url.removeprefix("mailto:")
    return url if text.strip() in (url, bare) else f"{text} ({url})"


def _code_block(body: str, lang: str) -> str:
    return f"```{body}```" if body.strip() else body


WHATSAPP = Dialect(
    escape=_same,
    code=lambda s: f"`{s}`",
    link=_link,
    bold=lambda s: f"*{s}*",
    italic=lambda s: f"_{s}_",
    strike=lambda s: f"~{s}~",
    code_block=_code_block,
    heading=lambda s: f"*{s}*",
    quote_line=lambda s: f"> {s}",
    bullet="- ",
)


def render_block(block: Block) -> str:
    return render_in(block, WHATSAPP)


def to_whatsapp(markdown: str) -> str:
    return render(markdown, WHATSAPP)
