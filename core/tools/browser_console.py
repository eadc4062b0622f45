"""``browser_console``: what the open page logged (console messages, uncaught errors)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from core.browser.tool import BrowserTool
from core.contracts.toolkit import ToolContext


class BrowserConsoleArgs(BaseModel):
    pass


class BrowserConsole(BrowserTool):
    name = "browser_console"
    description = "The open page's console messages and JavaScript errors as it loads."
    discoverable = True
    Args = BrowserConsoleArgs
    action = "console"

    async def run(self, ctx: ToolContext, args: BrowserConsoleArgs) -> str:
        return await self.act(ctx, {})

    def render(self, ctx: ToolContext, answer: dict[str, Any], page: int) -> str:
        lines = answer.get("console") or []
        return f"Console of {answer.get('url')}:\n" + ("\n".join(lines) or "(nothing logged)")
