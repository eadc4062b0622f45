"""``browser_images``: the open page's images (address and alt text)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from core.browser.tool import BrowserTool
from core.contracts.toolkit import ToolContext


class BrowserImagesArgs(BaseModel):
    pass


class BrowserImages(BrowserTool):
    name = "browser_images"
    description = "List the open page's images: URL and alt text (at most 50)."
    discoverable = True
    Args = BrowserImagesArgs
    action = "images"

    async def run(self, ctx: ToolContext, args: BrowserImagesArgs) -> str:
        return await self.act(ctx, {})

    def render(self, ctx: ToolContext, answer: dict[str, Any], page: int) -> str:
        rows = [
            f"- {src[:300]} ({alt[:100] or 'no alt text'})"
            for src, alt in answer.get("images") or []
        ]
        return f"Images on {answer.get('url')}:\n" + ("\n".join(rows) or "(none)")
