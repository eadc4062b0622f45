"""Markdown → Telegram's HTML parse mode (``<b>``, ``<i>``, ``<s>``, ``<code>``, ``<pre>``,
``<a>``, ``<blockquote>``). Every tag this emits is balanced and every other ``<``, ``>`` and
``&`` is escaped, so Telegram accepts it; a send that is refused anyway falls back to plain text.
"""

from __future__ import annotations

from html import escape

from core.platforms.markdown import (
    BULLET,
    HEADING,
    QUOTE,
    RULE,
    Block,
    emphasis,
    inline_spans,
    split_blocks,
)


def _text(value: str) -> str:
    return escape(value, quote=False)


def inline(text: str) -> str:
    out: list[str] = []
    for span in inline_spans(text):
        if span.kind == "code":
            out.append(f"<code>{_text(span.text)}</code>")
        elif span.kind == "link":
            out.append(f'<a href="{escape(span.url, quote=True)}">{_text(span.text)}</a>')
        else:
            out.append(emphasis(
                _text(span.text),
                bold=lambda s: f"<b>{s}</b>",
                italic=lambda s: f"<i>{s}</i>",
                strike=lambda s: f"<s>{s}</s>",
            ))
    return "".join(out)


def render_block(block: Block) -> str:
    if block.code:
        body = _text(block.body)
        if block.lang:
            return f'<pre><code class="language-{escape(block.lang)}">{body}</code></pre>'
        return f"<pre>{body}</pre>"
    lines: list[str] = []
    quote: list[str] = []

    def end_quote() -> None:
        if quote:
            lines.append("<blockquote>" + "\n".join(quote) + "</blockquote>")
            quote.clear()

    for line in block.text.split("\n"):
        if match := QUOTE.match(line):
            quote.append(inline(match.group(1)))
            continue
        end_quote()
        if RULE.match(line):
            lines.append("——————")
        elif match := HEADING.match(line):
            lines.append(f"<b>{inline(match.group(1))}</b>")
        elif match := BULLET.match(line):
            lines.append(f"{match.group(1)}• {inline(match.group(2))}")
        else:
            lines.append(inline(line))
    end_quote()
    return "\n".join(lines)


def to_telegram_html(markdown: str) -> str:
    return "\n\n".join(render_block(block) for block in split_blocks(markdown))
