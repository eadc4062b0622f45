"""``browser_back``: return to the previous page."""

from __future__ import annotations

from pydantic import BaseModel

from core.browser.tool import BrowserTool
from core.contracts.toolkit import ToolContext


class BrowserBackArgs(BaseModel):
    pass


class BrowserBack(BrowserTool):
    name = "browser_back"
    description = "Go back to the previous page; returns its snapshot."
    discoverable = True
    Args = BrowserBackArgs
    action = "back"

    async def run(self, ctx: ToolContext, args: BrowserBackArgs) -> str:
        return await self.act(ctx, {})
