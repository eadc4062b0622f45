"""``terminal``: run a shell command in the user's workspace. A ``/stop`` while it runs ends
the command at once, in the sandbox too, with what it printed so far (``core.acting.stopping``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.acting.approvals import danger_of, hold_command, may_hold
from core.acting.output import format_exec
from core.acting.stopping import noted_if_stopped, watch_for_stop
from core.acting.tooling import sandbox_errors, workspaces
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry
from core.lanes import blocking

MAX_COMMAND_CHARS = 32_000


class TerminalArgs(BaseModel):
    command: str = Field(
        min_length=1, max_length=MAX_COMMAND_CHARS,
        description="Write long text with write_file instead.",
    )
    timeout: float | None = Field(
        default=None, gt=0,
        description="Seconds (default 60).",
    )
    workdir: str | None = Field(
        default=None, description="Relative to the workspace root."
    )


class Terminal(Tool):
    name = "terminal"
    description = (
        "Run a bash command in your persistent workspace sandbox; returns exit code, stdout, "
        "stderr (long output keeps head and tail). Each call is a fresh shell: use workdir, not "
        "cd. No interactive programs. Dangerous commands are refused or held for approval."
    )
    Args = TerminalArgs
    untrusted_output = True

    async def run(self, ctx: ToolContext, args: TerminalArgs) -> str:
        settings = ctx.settings
        limit = settings.sandbox_max_timeout
        if args.timeout is not None and args.timeout > limit:
            raise ToolRetry(f"timeout may be at most {limit:g} seconds")
        reason = await blocking("checks", ctx.user_id, danger_of, settings, args.command,
                                what="checking the command")
        if reason is not None:
            if not may_hold(ctx):
                raise ToolRetry(
                    f"refused: this command {reason}; it was not run. Find a safer way, or "
                    "explain to the user why it is needed."
                )
            held = hold_command(
                ctx, args.command, workdir=args.workdir, timeout=args.timeout, reason=reason
            )
            raise ToolRetry(
                f"not run yet: this command {reason}, so it needs the user's approval. It is "
                f"held as #{held.number}. Ask the user to send /approve {held.number} to run "
                f"it (or /approve deny {held.number}); it expires in "
                f"{settings.approval_minutes:g} minutes. Do not try to get around this."
            )
        timeout = args.timeout or settings.sandbox_timeout
        with sandbox_errors():
            async with workspaces(ctx).use(ctx.user_id) as box, \
                    watch_for_stop(ctx, "terminal") as stop:
                result = await box.exec(args.command, cwd=args.workdir, timeout=timeout,
                                        stop=stop)
        return format_exec(noted_if_stopped(result, "command"), settings.max_tool_output_chars)
