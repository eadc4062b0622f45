"""``browser_click``: click an element of the open page by its snapshot ref."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.browser.tool import BrowserTool
from core.contracts.toolkit import ToolContext


class BrowserClickArgs(BaseModel):
    ref: str = Field(pattern=r"^e[0-9]{1,5}$", description="e.g. e12")


class BrowserClick(BrowserTool):
    name = "browser_click"
    description = "Click the element with this ref; returns the new snapshot."
    discoverable = True
    Args = BrowserClickArgs
    action = "click"

    async def run(self, ctx: ToolContext, args: BrowserClickArgs) -> str:
        return await self.act(ctx, {"ref": args.ref})
