"""Tool calls a model prints as text, kept out of a streamed answer as it is produced.

``core.model.answer_text.strip_tool_syntax`` cleans the whole answer at the end; a stream shows text
before the end, so this filter sits between the model call and the answer sink. Ordinary text
passes at once. A line that may begin printed call syntax (``<tool_call>``, a ``{`` or ``[`` at
the start of a line, a ``functions.NAME:`` line) is held until it is known: a call is dropped,
anything else is passed on as it was. Inside a ``` code fence nothing is held.
"""

from __future__ import annotations

import json
import re

from core.model.answer_text import strip_tool_syntax
from core.model.streaming import AnswerSink

MAX_HELD_CHARS = 16_000  # held text past this is not a call anyone would print: let it through
_TAG = "<tool_call>"
_FUNCTIONS = "functions."
_FUNCTIONS_LINE = re.compile(r"[ \t]*functions\.[A-Za-z_][\w.-]*:[ \t]*\n")


def _may_begin_call(line: str) -> bool:
    """Whether a line (possibly not finished yet) may be, or become, the start of a call."""
    text = line.lstrip(" \t")
    if not text:
        return True  # blanks only so far: the line's first character decides
    return text[0] in "{[" or text.startswith(_FUNCTIONS) or _FUNCTIONS.startswith(text)


def _tag_start(line: str) -> int | None:
    """Where ``line`` has ``<tool_call>``, or ends in the start of one; None if nowhere."""
    at = line.find("<")
    while at >= 0:
        rest = line[at:]
        if rest.startswith(_TAG) or _TAG.startswith(rest):
            return at
        at = line.find("<", at + 1)
    return None


def _is_fence(line: str) -> bool:
    return line.lstrip().startswith("```")


class PrintedCallFilter:
    """An ``AnswerSink`` in front of another: ``finish()`` at the end of the model call."""

    def __init__(self, sink: AnswerSink) -> None:
        self._sink = sink
        self._pending = ""  # text not passed on yet: the line being read, or a held block
        self._mid_line = False  # part of the current line has been passed on
        self._line = ""  # the current line's text passed on so far (to spot a fence)
        self._fenced = False

    def text(self, delta: str) -> None:
        self._pending += delta
        self._drain(final=False)

    def reset(self) -> None:
        self._pending, self._mid_line, self._line, self._fenced = "", False, "", False
        self._sink.reset()

    def finish(self) -> None:
        self._drain(final=True)

    def _emit(self, text: str) -> None:
        if not text:
            return
        self._sink.text(text)
        last = text.rfind("\n")
        self._line = text[last + 1:] if last >= 0 else self._line + text
        self._mid_line = not text.endswith("\n")

    def _pass_line(self, line: str) -> None:
        """Pass on a whole line (or the rest of one), tracking code fences."""
        start = self._line if self._mid_line else ""
        if line.endswith("\n") and _is_fence(start + line):
            self._fenced = not self._fenced
        self._emit(line)

    def _drain(self, *, final: bool) -> None:
        while self._pending:
            newline = self._pending.find("\n")
            line = self._pending if newline < 0 else self._pending[:newline + 1]
            if not self._fenced and (tag := _tag_start(line)) is not None:
                if tag > 0:  # the words before a tag on its line go now
                    self._pass_line(line[:tag])
                    self._pending = self._pending[tag:]
                    continue
                if not self._decide(final):
                    return
                continue
            if self._mid_line or self._fenced:  # a line already begun, or code: pass it on
                if newline < 0 and not final and not self._mid_line and "```".startswith(
                        line.lstrip()[:3]):
                    return  # code, at a line's start: may be the closing fence
                self._pass_line(line)
                self._pending = self._pending[len(line):]
                continue
            if not _may_begin_call(line):
                if newline < 0 and not final and "```".startswith(line.lstrip()[:3]):
                    return  # may become a fence line
                self._pass_line(line)
                self._pending = self._pending[len(line):]
                continue
            if not self._decide(final):
                return

    def _decide(self, final: bool) -> bool:
        """The pending text starts with a line that may begin a call. Drop the call, pass on
        what is not one, or wait for more text (False)."""
        held = self._pending
        end = self._known_end(held)
        if end is None:
            if not final and len(held) <= MAX_HELD_CHARS:
                return False
            end = len(held)
        block, self._pending = held[:end], held[end:]
        cleaned, found = strip_tool_syntax(block)
        if not found:
            first_line = block[:block.find("\n") + 1] if "\n" in block else block
            self._pass_line(first_line)  # not a call: its first line goes, the rest is re-read
            self._pending = block[len(first_line):] + self._pending
            return True
        if cleaned:  # words on the call's own lines stay
            self._pass_line(cleaned + ("\n" if block.endswith("\n") else ""))
        return True

    @staticmethod
    def _known_end(held: str) -> int | None:
        """Where the block that may be a call ends, once enough of it has arrived."""
        text = held.lstrip(" \t")
        offset = len(held) - len(text)
        if _TAG in held:
            close = held.find("</tool_call>")
            if close < 0:
                return None
            end = close + len("</tool_call>")
            return end + 1 if held[end:end + 1] == "\n" else end
        if _TAG.startswith(text.rstrip("\n")) or _FUNCTIONS.startswith(text.rstrip("\n")):
            return None if "\n" not in held else held.index("\n") + 1
        start = offset
        if text.startswith(_FUNCTIONS):
            match = _FUNCTIONS_LINE.match(held)
            if match is None:
                return None if "\n" not in held else held.index("\n") + 1
            start = match.end()
            while start < len(held) and held[start] in " \t\r\n":
                start += 1
            if start >= len(held):
                return None
            if held[start] not in "{[":
                return match.end()
        try:
            end = json.JSONDecoder().raw_decode(held, start)[1]
        except ValueError:
            # Not a complete value yet, or not JSON: a blank line or a long wait decides.
            blank = held.find("\n\n", start)
            return blank + 1 if blank >= 0 else None
        return end + 1 if held[end:end + 1] == "\n" else end
