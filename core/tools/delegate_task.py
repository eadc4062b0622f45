"""``delegate_task``: hand parts of a job to up to three subagents working in parallel."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from core.acting.subagents import MAX_CHILDREN
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry


class DelegateTaskArgs(BaseModel):
    goal: str = Field(min_length=1, description="What the work as a whole is for.")
    context: str = Field(
        default="",
        description="Everything the subagents need to know: they do not see this conversation.",
    )
    tasks: list[str] = Field(
        default_factory=list, max_length=MAX_CHILDREN,
        description=f"Up to {MAX_CHILDREN} independent tasks, one subagent each, run in "
        "parallel. Leave empty to delegate the goal itself to one subagent.",
    )

    @field_validator("tasks")
    @classmethod
    def _no_blank_tasks(cls, tasks: list[str]) -> list[str]:
        if any(not task.strip() for task in tasks):
            raise ValueError("tasks must not be empty strings")
        return tasks


class DelegateTask(Tool):
    name = "delegate_task"
    deferred = True
    brief = "parallel subagents for independent tasks"
    description = (
        "Delegate work to subagents: each gets the goal, your context and one task, works with "
        "your tools (no memory writes, no cron, no further delegation) in the same workspace, "
        "and returns a summary. Use it for independent pieces of a larger job."
    )
    Args = DelegateTaskArgs
    untrusted_output = True

    async def run(self, ctx: ToolContext, args: DelegateTaskArgs) -> str:
        runner = ctx.services.subagents
        if runner is None:
            raise ToolRetry("subagents are not available here")
        tasks = args.tasks or [args.goal]
        results = await runner.run(ctx, args.goal, args.context, tasks)
        done = sum(result.status == "done" for result in results)
        lines = [f"{len(results)} subagent(s) finished: {done} done."]
        for number, result in enumerate(results, start=1):
            lines.append(
                f"\n## Task {number}: {result.task}\n[{result.status}, {result.tool_calls} tool "
                f"calls, session {result.session_id}]\n{result.summary}"
            )
        return "\n".join(lines)
