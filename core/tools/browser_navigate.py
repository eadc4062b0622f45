"""``browser_navigate``: open a URL in the user's own browser (in their sandbox)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.browser.tool import BrowserTool
from core.contracts.toolkit import ToolContext


class BrowserNavigateArgs(BaseModel):
    url: str = Field(min_length=1, max_length=4_000)


class BrowserNavigate(BrowserTool):
    name = "browser_navigate"
    description = (
        "Open a URL in your browser (runs JavaScript, keeps cookies between turns); "
        "returns the page snapshot with [eN] element refs for the other browser tools."
    )
    brief = "a real browser for pages needing JavaScript, forms, sign-ins"
    discoverable = True
    Args = BrowserNavigateArgs
    action = "navigate"

    async def run(self, ctx: ToolContext, args: BrowserNavigateArgs) -> str:
        return await self.act(ctx, {"url": args.url})
