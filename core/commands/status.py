"""/status: this session at a glance: when it started, its size, loaded tools, its task list."""

from __future__ import annotations

from datetime import UTC, datetime

from core.commands import CommandContext, CommandResult, command


@command("status", "this session: start, size, loaded tools and the task list")
async def status(ctx: CommandContext, args: str) -> CommandResult:
    from core.lanes import in_store_lane

    return CommandResult(reply=await in_store_lane(ctx.user_id, _status, ctx))


def _status(ctx: CommandContext) -> str:
    from core.tools.todo import render

    session = ctx.session
    started = datetime.fromtimestamp(session.started_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    count = ctx.store.messages.count(ctx.user_id, session.id)
    loaded = ctx.store.session_tools.loaded(ctx.user_id, session.id)
    lines = [f"Session {session.id}, started {started}, {count} messages."]
    if loaded:
        lines.append(f"Tools loaded for this session: {', '.join(loaded)}.")
    lines.append(render(ctx.store.todos.get(ctx.user_id, session.id)))
    return "\n".join(lines)
