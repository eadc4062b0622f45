"""``browser_snapshot``: the open page again, as numbered elements, a window at a time."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.browser.tool import BrowserTool
from core.contracts.toolkit import ToolContext


class BrowserSnapshotArgs(BaseModel):
    page: int = Field(default=1, ge=1, le=100, description="Window of a long snapshot.")


class BrowserSnapshot(BrowserTool):
    name = "browser_snapshot"
    description = "The open page's elements with [eN] refs (long pages come in windows)."
    discoverable = True
    Args = BrowserSnapshotArgs
    action = "snapshot"

    async def run(self, ctx: ToolContext, args: BrowserSnapshotArgs) -> str:
        return await self.act(ctx, {}, page=args.page)
