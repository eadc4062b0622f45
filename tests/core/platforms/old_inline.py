"""The regular-expression inline renderer Iris used before ``core.platforms.inline`` (quadratic
on unclosed markup): an oracle the linear scanner is compared with on short lines."""

import re

CODE_SPAN = r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
LINK = r"\[(?P<link_text>[^\]\n]+)\]\((?P<url>(?:https?://|mailto:|tg://)[^\s)]+)\)"
INLINE = re.compile(f"{CODE_SPAN}|{LINK}")

BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
ITALIC = re.compile(
    r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])|(?<![\w])_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)"
)
STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def inline_spans(text):
    at = 0
    for match in INLINE.finditer(text):
        if match.start() > at:
            yield ("text", text[at:match.start()], "")
        if match.group("code"):
            yield ("code", match.group("code_text"), "")
        else:
            yield ("link", match.group("link_text"), match.group("url"))
        at = match.end()
    if at < len(text):
        yield ("text", text[at:], "")


def emphasis(text, *, bold, italic, strike):
    marks = []

    def hold(rendered):
        marks.append(rendered)
        return f"\x00{len(marks) - 1}\x00"

    def inner(value):
        return re.sub(r"\x00(\d+)\x00", lambda m: marks[int(m.group(1))], value)

    text = BOLD.sub(lambda m: hold(bold(inner(m.group(1) or m.group(2)))), text)
    text = STRIKE.sub(lambda m: hold(strike(inner(m.group(1)))), text)
    text = ITALIC.sub(lambda m: hold(italic(inner(m.group(1) or m.group(2)))), text)
    return inner(text)
