"""``execute_code``: a Python script in the user's sandbox that calls tools, in one step."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.acting.approvals import danger_of
from core.acting.scripts import describe, run_script
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry
from core.lanes import blocking

MAX_CODE_CHARS = 100_000


class ExecuteCodeArgs(BaseModel):
    code: str = Field(min_length=1, max_length=MAX_CODE_CHARS, description="Python 3 source.")


class ExecuteCode(Tool):
    name = "execute_code"
    deferred = True
    brief = "a Python script that calls tools, many steps in one call"
    description = (
        "Run a Python 3 script in your workspace sandbox (cwd: the workspace). It can call "
        "tools: from iris_tools import web_search, web_extract, read_file, write_file, "
        "search_files, patch, terminal; each takes that tool's arguments (the first may be "
        "positional) and returns its text, or raises iris_tools.ToolError. Only what the "
        "script prints comes back: use it to chain steps or boil down large outputs. Limits: "
        "wall time, tool calls, printed output (300 s, 50, 20,000 chars by default)."
    )
    Args = ExecuteCodeArgs
    untrusted_output = True

    async def run(self, ctx: ToolContext, args: ExecuteCodeArgs) -> str:
        toolset = ctx.toolset
        if toolset is None:
            raise ToolRetry("execute_code is not available here")
        reason = await blocking("checks", ctx.user_id, danger_of, ctx.settings, args.code,
                                what="checking the script")
        if reason is not None:
            raise ToolRetry(
                f"refused: this script {reason}; it was not run. Do that step with the "
                "terminal tool (which can hold it for the user's approval) and keep scripts "
                "to safe work."
            )
        run = await run_script(ctx, toolset, args.code)
        return describe(run, ctx.settings)
