"""``read_file``: read a text file of the workspace, with line numbers, a window at a time."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.acting.output import decode_text, is_binary
from core.acting.tooling import sandbox_errors, workspaces
from core.errors import ToolRetry
from core.toolkit import Tool, ToolContext

MAX_LINE_CHARS = 2_000


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
        with sandbox_errors():
            async with workspaces(ctx).use(ctx.user_id) as box:
                data = await box.read_file(args.path)
        if is_binary(data):
            raise ToolRetry(
                f"{args.path!r} is a binary file ({len(data)} bytes); inspect it with the "
                "terminal tool (e.g. file, xxd | head) instead"
            )
        lines = decode_text(data).splitlines()
        if not lines:
            return f"{args.path}: (empty file)"
        if args.offset > len(lines):
            raise ToolRetry(f"offset {args.offset} is past the end: {args.path!r} has "
                            f"{len(lines)} lines")
        budget = ctx.settings.max_tool_output_chars
        start = args.offset - 1
        shown: list[str] = []
        end = start
        for number, line in enumerate(lines[start : start + args.limit], start=args.offset):
            if len(line) > MAX_LINE_CHARS:
                line = f"{line[:MAX_LINE_CHARS]}… [{len(line) - MAX_LINE_CHARS} more chars]"
            row = f"{number:>6}\t{line}"
            budget -= len(row) + 1
            if budget < 0 and shown:
                break
            shown.append(row)
            end = number
        header = f"{args.path}: lines {args.offset}-{end} of {len(lines)}"
        footer = ""
        if end < len(lines):
            footer = f"\n(more below: continue with offset={end + 1})"
        return header + "\n" + "\n".join(shown) + footer
