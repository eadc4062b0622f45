"""``write_file``: create or replace a file in the workspace."""

from __future__ import annotations

import posixpath

from pydantic import BaseModel, Field

from core.acting.tooling import lock_key, sandbox_errors, workspaces
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry


class WriteFileArgs(BaseModel):
    path: str = Field(min_length=1)  # relative to the workspace root
    content: str = Field(description="The whole file.")


class WriteFile(Tool):
    name = "write_file"
    description = (
        "Write a whole text file in the workspace (makes directories; replaces an existing "
        "file). To change part of a file use patch."
    )
    Args = WriteFileArgs

    async def run(self, ctx: ToolContext, args: WriteFileArgs) -> str:
        from sandboxes import SandboxFileNotFound

        data = args.content.encode("utf-8")
        parent, name = posixpath.split(args.path.rstrip("/"))
        if not name or name in (".", ".."):
            raise ToolRetry(f"{args.path!r} does not name a file")
        spaces = workspaces(ctx)
        with sandbox_errors():
            async with (
                spaces.file_lock(ctx.user_id, lock_key(args.path)),
                spaces.use(ctx.user_id) as box,
            ):
                try:
                    entries = {entry.name: entry for entry in await box.list_dir(parent or ".")}
                except SandboxFileNotFound:
                    entries = {}
                before = entries.get(name)
                if before is not None and before.is_dir:
                    raise ToolRetry(f"{args.path!r} is a directory")
                await box.write_file(args.path, data)
        if before is None:
            return f"Created {args.path} ({len(data)} bytes)."
        return f"Replaced {args.path}: {before.size} bytes before, {len(data)} bytes now."
