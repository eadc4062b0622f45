"""Markdown → Slack mrkdwn: ``*bold*``, ``_italic_``, ``~strike~``, ``<url|text>``, code as is.

Slack wants ``&``, ``<`` and ``>`` escaped in text; Slack's own references (``<@U123>``,
``<#C123>``, ``<!here>``, ``<https://…>``) that a reply quotes are kept as they are.
"""

from __future__ import annotations

import re

from core.platforms.markdown import Block
from core.platforms.render import Dialect, render
from core.platforms.render import render_block as render_in

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


def _link(text: str, url: str) -> str:
    label = _escape(text).replace("|", "¦")
    url = url.replace("|", "%7C").replace("<", "%3C").replace(">", "%3E")
    return f"<{url}|{label}>"


SLACK_MRKDWN = Dialect(
    escape=_escape,
    text=_text,
    code=lambda s: f"`{_escape(s)}`",
    link=_link,
    bold=lambda s: f"*{s}*",
    italic=lambda s: f"_{s}_",
    strike=lambda s: f"~{s}~",
    code_block=lambda body, lang: f"```\n{_escape(body)}\n```",
    heading=lambda s: f"*{s}*",
    quote_line=lambda s: f"> {s}",
)


def render_block(block: Block) -> str:
    return render_in(block, SLACK_MRKDWN)


def to_mrkdwn(markdown: str) -> str:
    return render(markdown, SLACK_MRKDWN)
