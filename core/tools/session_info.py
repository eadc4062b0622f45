"""``session_info``: facts about the current session (id, start, size, model, usage)."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel

from core.contracts.toolkit import Tool, ToolContext


class SessionInfoArgs(BaseModel):
    pass


class SessionInfo(Tool):
    name = "session_info"
    deferred = True
    brief = "session size, usage and cost"
    description = (
        "Describe the current conversation session: its id, when it started, how many messages "
        "it holds, the platform, and the tokens and cost used so far."
    )
    Args = SessionInfoArgs

    async def run(self, ctx: ToolContext, args: SessionInfoArgs) -> str:
        from core.lanes import in_store_lane

        return await in_store_lane(ctx.user_id, self._describe, ctx)

    def _describe(self, ctx: ToolContext) -> str:
        session = ctx.store.sessions.get(ctx.user_id, ctx.session_id)
        count = ctx.store.messages.count(ctx.user_id, ctx.session_id)
        totals = ctx.store.usage.totals(ctx.user_id, session_id=ctx.session_id)
        started = datetime.fromtimestamp(session.started_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
        cost = f"${totals.cost_usd:.4f}" if totals.cost_usd is not None else "unknown"
        return (
            f"session {session.id} on {ctx.platform} (chat {ctx.chat_key}), started {started}; "
            f"{count} stored messages; {totals.calls} model calls, "
            f"{totals.prompt_tokens} prompt + {totals.completion_tokens} completion tokens, "
            f"cost {cost}"
        )
