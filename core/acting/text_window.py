"""Lines ``offset`` … ``offset + limit - 1`` of a workspace file too large to read at once,
read window by window (``Sandbox.read_range``): memory stays at one window plus the lines
shown, whatever the file's size, and reading stops once the lines asked for are in hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandboxes import Sandbox

WINDOW = 256 * 1024
MAX_SCAN = 256 * 1024 * 1024
"""Bytes read to find the first line asked for; deeper lines are for the terminal tool."""


@dataclass
class Found:
    lines: list[tuple[int, str, int | None]] = field(default_factory=list)
    """(line number, its first bytes decoded, its length in bytes when it was cut)."""
    at_end: bool = False
    """The file ended after the last line found."""
    lines_seen: int = 0


class TooDeep(Exception):
    """The first line asked for lies further than ``MAX_SCAN`` bytes into the file."""


async def find_lines(box: Sandbox, path: str, first: bytes, size: int, *, offset: int,
                     limit: int, keep: int, budget: int) -> Found:
    """Lines from ``offset`` (1-based): at most ``limit`` of them and about ``budget``
    characters; each keeps its first ``keep`` bytes. ``first`` is the file's first window."""
    found = Found()
    number, line, length, spent = 1, bytearray(), 0, 0
    position, chunk = len(first), first
    while True:
        pieces = chunk.split(b"\n")
        for index, piece in enumerate(pieces):
            if number >= offset and len(line) < keep:
                line += piece[: keep - len(line)]
            length += len(piece)
            if index == len(pieces) - 1:
                break
            if number >= offset:
                found.lines.append(_line(number, line, length, keep))
                spent += min(length, keep) + 8
            found.lines_seen = number
            number, line, length = number + 1, bytearray(), 0
            if len(found.lines) >= limit or (spent > budget and found.lines):
                found.at_end = position >= size and pieces[index + 1:] == [b""]
                return found
        if number < offset and position > MAX_SCAN:
            raise TooDeep()
        if position >= size:
            break
        chunk = (await box.read_range(path, position, WINDOW)).data
        if not chunk:
            break
        position += len(chunk)
    if length and number >= offset:
        found.lines.append(_line(number, line, length, keep))
        found.lines_seen = number
    found.at_end = True
    return found


def _line(number: int, kept: bytearray, length: int, keep: int) -> tuple[int, str, int | None]:
    if length > keep:
        return number, bytes(kept).decode("utf-8", errors="replace"), length
    return number, bytes(kept).rstrip(b"\r").decode("utf-8", errors="replace"), None
