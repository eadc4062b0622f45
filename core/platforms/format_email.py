"""Markdown → the simple HTML part of a reply email (the plain-text part is the Markdown as
written). Every tag is balanced and all text is escaped."""

from __future__ import annotations

from html import escape

from core.platforms.render import Dialect, render


def _text(value: str) -> str:
    return escape(value, quote=False)


EMAIL_HTML = Dialect(
    escape=_text,
    code=lambda s: f"<code>{_text(s)}</code>",
    link=lambda text, url: f'<a href="{escape(url, quote=True)}">{_text(text)}</a>',
    bold=lambda s: f"<strong>{s}</strong>",
    italic=lambda s: f"<em>{s}</em>",
    strike=lambda s: f"<s>{s}</s>",
    code_block=lambda body, lang: f"<pre>{_text(body)}</pre>",
    heading=lambda s: f"<strong>{s}</strong>",
    quote_group=lambda lines: "<blockquote>" + "<br>".join(lines) + "</blockquote>",
)


def to_email_html(markdown: str) -> str:
    blocks = render(markdown, EMAIL_HTML).split("\n\n")
    body = "\n".join(
        block if block.startswith(("<pre>", "<blockquote>")) else
        "<p>" + block.replace("\n", "<br>\n") + "</p>" for block in blocks)
    head = '<!doctype html>\n<html><body style="font-family: sans-serif">'
    return f"{head}\n{body}\n</body></html>\n"
