"""``browser_type``: type text into a field of the open page, optionally submitting its form.
A password field takes only a value the user wrote in this turn's message."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.browser.tool import BrowserTool
from core.contracts.toolkit import ToolContext


class BrowserTypeArgs(BaseModel):
    ref: str = Field(pattern=r"^e[0-9]{1,5}$", description="e.g. e12")
    text: str = Field(max_length=10_000)
    submit: bool = Field(default=False, description="Submit the field's form afterwards.")


class BrowserType(BrowserTool):
    name = "browser_type"
    description = "Type text into the field with this ref (replacing its value)."
    discoverable = True
    Args = BrowserTypeArgs
    action = "type"

    async def run(self, ctx: ToolContext, args: BrowserTypeArgs) -> str:
        given = bool(args.text) and args.text in user_words(ctx)
        return await self.act(
            ctx,
            {"ref": args.ref, "text": args.text, "submit": args.submit, "allow_password": given},
        )


def user_words(ctx: ToolContext) -> str:
    """The text of the message this turn answers ('' when there is none)."""
    if ctx.inbox_id is None:
        return ""
    return ctx.store.inbox.get(ctx.user_id, ctx.inbox_id).message.text
