"""What every browser tool shares: a catalogue group, untrusted output, a per-turn budget."""

from __future__ import annotations

from typing import Any, ClassVar

from core.browser.session import page_view, run_action
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry


class BrowserTool(Tool):
    """One browser action; subclasses name it and shape its arguments."""

    discoverable = False
    deferred = True
    group = "browser"
    untrusted_output = True
    action: ClassVar[str]

    async def act(self, ctx: ToolContext, args: dict[str, Any], page: int = 1) -> str:
        return self.render(ctx, await self.answer(ctx, args), page)

    async def answer(
        self, ctx: ToolContext, args: dict[str, Any], read_back: str | None = None
    ) -> dict[str, Any]:
        """The driver's answer (counted against the turn's budget of browser actions)."""
        if ctx.browser_actions >= ctx.settings.browser_pages_per_turn:
            raise ToolRetry(
                f"this turn has used its {ctx.settings.browser_pages_per_turn} "
                "browser actions; answer with what you have"
            )
        ctx.browser_actions += 1
        return await run_action(ctx, self.action, args, read_back=read_back)

    def render(self, ctx: ToolContext, answer: dict[str, Any], page: int) -> str:
        return page_view(answer, ctx.settings.browser_snapshot_chars, page)
