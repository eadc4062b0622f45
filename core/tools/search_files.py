"""``search_files``: find text in workspace files (like grep -rn), or find files by name."""

from __future__ import annotations

import shlex

from pydantic import BaseModel, Field, model_validator

from core.acting.tooling import sandbox_errors, workspaces
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry

LINE_CHARS = 300
SEARCH_TIMEOUT = 60.0


class SearchFilesArgs(BaseModel):
    pattern: str | None = Field(
        default=None,
        description="grep -E regex over file contents.",
    )
    path: str = "."
    glob: str | None = Field(
        default=None, description="File name pattern, e.g. '*.py'."
    )
    max_results: int = Field(default=100, ge=1, le=1_000)

    @model_validator(mode="after")
    def _something_to_find(self) -> SearchFilesArgs:
        if not self.pattern and not self.glob:
            raise ValueError("give a pattern to search for, a glob to match file names, or both")
        return self


def _command(args: SearchFilesArgs) -> str:
    target = shlex.quote(args.path)
    if args.pattern:
        include = f" --include={shlex.quote(args.glob)}" if args.glob else ""
        return (
            "grep -rnHIE --color=never --exclude-dir=.git"
            f"{include} -e {shlex.quote(args.pattern)} -- {target}"
        )
    name = shlex.quote(args.glob or "*")
    return f"find {target} -name .git -prune -o -type f -name {name} -print"


def _clean(line: str) -> str:
    line = line.removeprefix("./")
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"


class SearchFiles(Tool):
    name = "search_files"
    description = (
        "Search the workspace: pattern lists matching lines (path:line:text); glob alone lists "
        "matching files."
    )
    Args = SearchFilesArgs
    untrusted_output = True

    async def run(self, ctx: ToolContext, args: SearchFilesArgs) -> str:
        from sandboxes import PathOutsideWorkspace, SandboxError, SandboxFileNotFound

        with sandbox_errors():
            async with workspaces(ctx).use(ctx.user_id) as box:
                try:
                    await box.list_dir(args.path)
                except (SandboxFileNotFound, PathOutsideWorkspace):
                    raise
                except SandboxError:
                    pass  # a file rather than a directory: grep searches it as it is
                result = await box.exec(_command(args), timeout=SEARCH_TIMEOUT)
        if result.timed_out:
            raise ToolRetry(f"the search took over {SEARCH_TIMEOUT:g} s; narrow path or glob")
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        lines = [line for line in lines if not line.startswith("[... ")]
        if args.pattern and result.exit_code == 2 and not lines:
            raise ToolRetry(f"grep could not search: {(result.stderr or result.stdout).strip()}")
        if (args.pattern and result.exit_code == 1) or not lines:
            what = f"pattern {args.pattern!r}" if args.pattern else f"files named {args.glob!r}"
            return f"No matches for {what} under {args.path!r}."
        if not args.pattern:
            lines.sort()
        shown = [_clean(line) for line in lines[: args.max_results]]
        notes = []
        if len(lines) > args.max_results:
            notes.append(f"[{len(lines) - args.max_results} more not shown; narrow the search]")
        elif result.truncated:
            notes.append("[more results were cut off; narrow the search]")
        kind = "matching lines" if args.pattern else "files"
        return "\n".join([f"{len(shown)} {kind}:", *shown, *notes])
