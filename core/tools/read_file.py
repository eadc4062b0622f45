"""``read_file``: read a text file of the workspace, with line numbers, a window at a time.

Only what is shown is read: a file up to ``WHOLE`` bytes is read at once (its size checked
before reading); a larger one window by window up to the last line shown
(``core.acting.text_window``), so a huge or sparse file costs one window of memory. Pipes,
devices and directories are refused before anything is read (the sandbox checks first)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.acting.output import decode_text, is_binary
from core.acting.text_window import MAX_SCAN, WINDOW, Found, TooDeep, find_lines
from core.acting.tooling import sandbox_errors, workspaces
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry

MAX_LINE_CHARS = 2_000
WHOLE = 1024 * 1024


class ReadFileArgs(BaseModel):
    path: str = Field(min_length=1)  # relative to the workspace root
    offset: int = Field(default=1, ge=1, description="First line (1-based).")
    limit: int = Field(default=500, ge=1, le=5_000)


class ReadFile(Tool):
    name = "read_file"
    description = (
        "Read a workspace text file, lines numbered; page long files with offset and limit."
    )
    Args = ReadFileArgs
    untrusted_output = True

    async def run(self, ctx: ToolContext, args: ReadFileArgs) -> str:
        from sandboxes import FileTooLarge

        budget = ctx.settings.max_tool_output_chars
        with sandbox_errors():
            async with workspaces(ctx).use(ctx.user_id) as box:
                try:
                    data = await box.read_file(args.path, max_bytes=WHOLE)
                except FileTooLarge:
                    head = await box.read_range(args.path, 0, WINDOW)
                    data, size = head.data, head.size
                else:
                    size = len(data)
                if is_binary(data):
                    raise ToolRetry(
                        f"{args.path!r} is a binary file ({size} bytes); inspect it with "
                        "the terminal tool (e.g. file, xxd | head) instead"
                    )
                if len(data) >= size:
                    return _whole(args, data, budget)
                try:
                    found = await find_lines(
                        box, args.path, data, size, offset=args.offset, limit=args.limit,
                        keep=MAX_LINE_CHARS * 4, budget=budget)
                except TooDeep:
                    raise ToolRetry(
                        f"line {args.offset} lies more than {MAX_SCAN // 2**20} MB into "
                        f"{args.path!r}; use the terminal tool (e.g. sed -n) that deep"
                    ) from None
        return _window(args, found, size)


def _row(number: int, line: str, more: str = "") -> str:
    if len(line) > MAX_LINE_CHARS:
        more = more or f"{len(line) - MAX_LINE_CHARS} more chars"
        line = line[:MAX_LINE_CHARS]
    return f"{number:>6}\t{line}… [{more}]" if more else f"{number:>6}\t{line}"


def _whole(args: ReadFileArgs, data: bytes, budget: int) -> str:
    lines = decode_text(data).splitlines()
    if not lines:
        return f"{args.path}: (empty file)"
    if args.offset > len(lines):
        raise ToolRetry(f"offset {args.offset} is past the end: {args.path!r} has "
                        f"{len(lines)} lines")
    start = args.offset - 1
    shown: list[str] = []
    end = start
    for number, line in enumerate(lines[start : start + args.limit], start=args.offset):
        row = _row(number, line)
        budget -= len(row) + 1
        if budget < 0 and shown:
            break
        shown.append(row)
        end = number
    header = f"{args.path}: lines {args.offset}-{end} of {len(lines)}"
    footer = f"\n(more below: continue with offset={end + 1})" if end < len(lines) else ""
    return header + "\n" + "\n".join(shown) + footer


def _window(args: ReadFileArgs, found: Found, size: int) -> str:
    if not found.lines:
        raise ToolRetry(f"offset {args.offset} is past the end: {args.path!r} has "
                        f"{found.lines_seen} lines")
    shown = [
        _row(number, text, "" if length is None else
             f"{length - len(text[:MAX_LINE_CHARS].encode())} more bytes")
        for number, text, length in found.lines
    ]
    end = found.lines[-1][0]
    header = (f"{args.path}: lines {args.offset}-{end} (a {size}-byte file, read up to the "
              "last line shown)")
    footer = "" if found.at_end else f"\n(more below: continue with offset={end + 1})"
    return header + "\n" + "\n".join(shown) + footer
