"""Markdown → Slack mrkdwn: ``*bold*``, ``_italic_``, ``~strike~``, ``<url|text>``, code as is.

Slack wants ``&``, ``<`` and ``>`` escaped in text; Slack's own references (``<@U123>``,
``<#C123>``, ``<!here>``, ``<https://…>``) that a reply quotes are kept as they are.
"""

from __future__ import annotations

import re

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

SLACK_REFERENCE = re.compile(r"<(?:[@#!][A-Za-z0-9^|._-]+|https?://[^\s<>]+)>")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _text(text: str) -> str:
    """Escape, keeping Slack references whole."""
    out: list[str] = []
    at = 0
    for match in SLACK_REFERENCE.finditer(text):
        out.append(_escape(text[at:match.start()]))
        out.append(match.group(0))
        at = match.end()
    out.append(_escape(text[at:]))
    return "".join(out)


def inline(text: str) -> str:
    out: list[str] = []
    for span in inline_spans(text):
        if span.kind == "code":
            out.append(f"`{_escape(span.text)}`")
        elif span.kind == "link":
            label = _escape(span.text).replace("|", "¦")
            url = span.url.replace("|", "%7C").replace("<", "%3C").replace(">", "%3E")
            out.append(f"<{url}|{label}>")
        else:
            out.append(emphasis(
                _text(span.text),
                bold=lambda s: f"*{s}*",
                italic=lambda s: f"_{s}_",
                strike=lambda s: f"~{s}~",
            ))
    return "".join(out)


def render_block(block: Block) -> str:
    if block.code:
        return f"```\n{_escape(block.body)}\n```"
    lines: list[str] = []
    for line in block.text.split("\n"):
        if match := QUOTE.match(line):
            lines.append(f"> {inline(match.group(1))}")
        elif RULE.match(line):
            lines.append("——————")
        elif match := HEADING.match(line):
            lines.append(f"*{inline(match.group(1))}*")
        elif match := BULLET.match(line):
            lines.append(f"{match.group(1)}• {inline(match.group(2))}")
        else:
            lines.append(inline(line))
    return "\n".join(lines)


def to_mrkdwn(markdown: str) -> str:
    return "\n\n".join(render_block(block) for block in split_blocks(markdown))
