"""What a model's text answer becomes before a user reads it.

Two things a small model does that must not reach the user raw:

- It prints a tool call as text (``<tool_call>{"name": …}</tool_call>``, a bare
  ``{"name": …, "arguments": …}`` object, or ``functions.NAME:`` lines) instead of making one,
  imitating its training data. Such text outside code fences is taken out: it is not a call and
  runs nothing.
- It runs to the answer-length cap (``finish_reason == "length"``). The cut answer ends at its last
  whole sentence, any open code fence is closed, and a note says how to raise the cap.
"""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"^\s*```", re.MULTILINE)
_TAGGED = re.compile(r"<tool_call>\s*(?:[\[{].*?(?:</tool_call>|\Z)|</tool_call>|\Z)", re.DOTALL)
_FUNCTIONS_LINE = re.compile(r"^[ \t]*functions\.[A-Za-z_][\w.-]*:[ \t]*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"[.!?…](?:[\"')\]*_]*)(?=\s|$)")
_JSON_START = re.compile(r"^[ \t]*[\[{]", re.MULTILINE)


def _is_call(value: object) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_call(item) for item in value)
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("tool_calls"), list):
        return True
    inner = value.get("function")
    if isinstance(inner, dict) and isinstance(inner.get("name"), str):
        return True
    return isinstance(value.get("name"), str) and ("arguments" in value or "parameters" in value)


def _outside_fences(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that are not inside a ``` code fence."""
    spans, start, inside = [], 0, False
    for match in _FENCE.finditer(text):
        if not inside:
            spans.append((start, match.start()))
        else:
            start = text.find("\n", match.end())
            start = len(text) if start < 0 else start
        inside = not inside
    if not inside:
        spans.append((start, len(text)))
    return spans


def _drop_json_after(text: str, begin: int, decoder: json.JSONDecoder) -> int:
    """Where the JSON value starting at ``begin`` (after blanks) ends; ``begin`` if none does."""
    at = begin
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    if at < len(text) and text[at] in "[{":
        try:
            return decoder.raw_decode(text, at)[1]
        except ValueError:
            pass
    return begin


def _strip_plain(text: str) -> tuple[str, bool]:
    cleaned = _TAGGED.sub("", text)
    found = cleaned != text
    decoder = json.JSONDecoder()
    out, position = [], 0
    for match in _FUNCTIONS_LINE.finditer(cleaned):  # functions.NAME: and its arguments
        if match.start() < position:
            continue
        out.append(cleaned[position:match.start()])
        position, found = _drop_json_after(cleaned, match.end(), decoder), True
    out.append(cleaned[position:])
    cleaned, out, position = "".join(out), [], 0
    for match in _JSON_START.finditer(cleaned):
        begin = match.end() - 1
        if begin < position:
            continue
        try:
            value, end = decoder.raw_decode(cleaned, begin)
        except ValueError:
            continue
        if _is_call(value):
            out.append(cleaned[position:begin])
            position, found = end, True
    out.append(cleaned[position:])
    return "".join(out), found


def strip_tool_syntax(text: str) -> tuple[str, bool]:
    """``text`` without tool-call syntax outside code fences, and whether any was found."""
    pieces, found, last = [], False, 0
    for start, end in _outside_fences(text):
        pieces.append(text[last:start])
        cleaned, here = _strip_plain(text[start:end])
        pieces.append(cleaned)
        found = found or here
        last = end
    pieces.append(text[last:])
    if not found:
        return text, False
    joined = re.sub(r"\n{3,}", "\n\n", "".join(pieces))
    return joined.strip(), True


def end_cleanly(text: str) -> str:
    """A cut-off answer ended at its last whole sentence (or word), code fences closed."""
    text = text.rstrip()
    ends = list(_SENTENCE_END.finditer(text))
    last = ends[-1] if ends else None
    if last is not None and last.end() >= len(text) // 5:  # not if it throws most away
        text = text[:last.end()]
    elif " " in text:
        text = text[:text.rindex(" ")].rstrip(" ,;:-") + "…"
    if len(_FENCE.findall(text)) % 2:
        text += "\n```"
    return text


def cut_short_note(limit: int | None) -> str:
    if limit is None:
        return "(The answer was cut short at the model's length limit.)"
    return (f"(The answer was cut short at {limit} tokens; set IRIS_MAX_OUTPUT_TOKENS higher "
            "for longer answers.)")
