"""Markdown → Telegram's HTML parse mode (``<b>``, ``<i>``, ``<s>``, ``<code>``, ``<pre>``,
``<a>``, ``<blockquote>``). Every tag this emits is balanced and every other ``<``, ``>`` and
``&`` is escaped, so Telegram accepts it; a send that is refused anyway falls back to plain text.
"""

from __future__ import annotations

from html import escape

from core.platforms.markdown import Block
from core.platforms.render import Dialect, render
from core.platforms.render import render_block as render_in


def _text(value: str) -> str:
    return escape(value, quote=False)


def _code_block(body: str, lang: str) -> str:
    if lang:
        return f'<pre><code class="language-{escape(lang)}">{_text(body)}</code></pre>'
    return f"<pre>{_text(body)}</pre>"


TELEGRAM_HTML = Dialect(
    escape=_text,
    code=lambda s: f"<code>{_text(s)}</code>",
    link=lambda text, url: f'<a href="{escape(url, quote=True)}">{_text(text)}</a>',
    bold=lambda s: f"<b>{s}</b>",
    italic=lambda s: f"<i>{s}</i>",
    strike=lambda s: f"<s>{s}</s>",
    code_block=_code_block,
    heading=lambda s: f"<b>{s}</b>",
    quote_group=lambda lines: "<blockquote>" + "\n".join(lines) + "</blockquote>",
)


def render_block(block: Block) -> str:
    return render_in(block, TELEGRAM_HTML)


def to_telegram_html(markdown: str) -> str:
    return render(markdown, TELEGRAM_HTML)
