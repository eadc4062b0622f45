"""Line diffs between two versions of a skill's files, as (kind, line) pairs for a template."""

from __future__ import annotations

import difflib

MAX_LINES = 400


def file_diff(before: str, after: str, path: str) -> list[tuple[str, str]]:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{path}",
                                 f"b/{path}", lineterm="", n=2)
    out: list[tuple[str, str]] = []
    for line in lines:
        if line.startswith(("+++", "---")):
            continue
        kind = "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"
        out.append((kind, line))
        if len(out) >= MAX_LINES:
            out.append(("ctx", "… (diff cut short)"))
            break
    return out


def text_of(data: bytes | None) -> str:
    if data is None:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return f"(binary, {len(data)} bytes)"
