"""``patch``: replace an exact piece of text in a workspace file."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from core.acting.output import decode_text, is_binary
from core.acting.tooling import lock_key, sandbox_errors, workspaces
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry

if TYPE_CHECKING:
    from sandboxes import Sandbox

DIFF_CHARS = 4_000
MAX_PATCH_BYTES = 8 * 1024 * 1024
"""Files larger than this are refused before any of them is read (sed in the terminal)."""


class PatchArgs(BaseModel):
    path: str = Field(min_length=1)  # relative to the workspace root
    old_string: str = Field(min_length=1, description="Exact text, whitespace included.")
    new_string: str
    replace_all: bool = False


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=f"a/{path}", tofile=f"b/{path}", n=2,
    )
    text = "".join(lines)
    if len(text) > DIFF_CHARS:
        text = text[:DIFF_CHARS] + "\n[... diff cut ...]"
    return text


def _squash(text: str) -> str:
    return " ".join(text.split())


async def _read(box: Sandbox, path: str) -> bytes:
    from sandboxes import FileTooLarge

    try:
        return await box.read_file(path, max_bytes=MAX_PATCH_BYTES)
    except FileTooLarge:
        raise ToolRetry(
            f"{path!r} is larger than {MAX_PATCH_BYTES // 2**20} MB, more than patch edits; "
            "change it with the terminal tool (e.g. sed -i) instead"
        ) from None


class Patch(Tool):
    name = "patch"
    description = (
        "Edit a workspace file: replace old_string (must match exactly once, unless "
        "replace_all) with new_string. Returns a diff."
    )
    Args = PatchArgs
    untrusted_output = True

    async def run(self, ctx: ToolContext, args: PatchArgs) -> str:
        if args.old_string == args.new_string:
            raise ToolRetry("old_string and new_string are the same; nothing to change")
        spaces = workspaces(ctx)
        with sandbox_errors():
            async with (
                spaces.file_lock(ctx.user_id, lock_key(args.path)),
                spaces.use(ctx.user_id) as box,
            ):
                data = await _read(box, args.path)
                if is_binary(data):
                    raise ToolRetry(f"{args.path!r} is a binary file; patch edits text files")
                before = decode_text(data)
                if before.encode("utf-8") != data:
                    raise ToolRetry(
                        f"{args.path!r} is not valid UTF-8; rewriting it would change bytes "
                        "you did not mean to change. Use the terminal tool instead."
                    )
                count = before.count(args.old_string)
                if count == 0:
                    hint = ""
                    if _squash(args.old_string) and _squash(args.old_string) in _squash(before):
                        hint = " (it is there with different whitespace or line breaks)"
                    raise ToolRetry(
                        f"old_string was not found in {args.path!r}{hint}; read the file and "
                        "copy the exact text"
                    )
                if count > 1 and not args.replace_all:
                    raise ToolRetry(
                        f"old_string occurs {count} times in {args.path!r}; include more "
                        "surrounding text to pick one, or set replace_all"
                    )
                after = before.replace(args.old_string, args.new_string)
                await box.write_file(args.path, after.encode("utf-8"))
        done = count if args.replace_all else 1
        plural = "s" if done != 1 else ""
        diff = _diff(args.path, before, after)
        return f"Replaced {done} occurrence{plural} in {args.path}.\n{diff}"
