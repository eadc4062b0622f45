"""``browser_scroll``: scroll the open page (pages that load more as you scroll)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from core.browser.tool import BrowserTool
from core.contracts.toolkit import ToolContext


class BrowserScrollArgs(BaseModel):
    direction: Literal["down", "up"] = "down"


class BrowserScroll(BrowserTool):
    name = "browser_scroll"
    description = "Scroll the page one screen; returns the snapshot after it."
    discoverable = True
    Args = BrowserScrollArgs
    action = "scroll"

    async def run(self, ctx: ToolContext, args: BrowserScrollArgs) -> str:
        return await self.act(ctx, {"direction": args.direction})
