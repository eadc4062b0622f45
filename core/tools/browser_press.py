"""``browser_press``: press a key (Enter, Tab, Escape, ArrowDown...) on the open page."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.browser.tool import BrowserTool
from core.contracts.toolkit import ToolContext


class BrowserPressArgs(BaseModel):
    key: str = Field(pattern=r"^[A-Za-z0-9]{1,12}$", description="e.g. Enter, Tab, Escape")
    ref: str | None = Field(
        default=None, pattern=r"^e[0-9]{1,5}$", description="Element to focus first."
    )


class BrowserPress(BrowserTool):
    name = "browser_press"
    description = "Press a key, optionally on an element; returns the snapshot after it."
    discoverable = True
    Args = BrowserPressArgs
    action = "press"

    async def run(self, ctx: ToolContext, args: BrowserPressArgs) -> str:
        return await self.act(ctx, {"key": args.key, "ref": args.ref})
