"""``clarify``: ask the user a question, with up to four choices, and end the turn."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.asking.clarify import MAX_CHOICES, ask
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry
from core.platforms.registry import PLATFORMS


class ClarifyArgs(BaseModel):
    question: str = Field(min_length=1, max_length=500)
    choices: list[str] = Field(default_factory=list, max_length=MAX_CHOICES,
                               description="Up to 4 short answers to pick from.")


class Clarify(Tool):
    name = "clarify"
    description = ("Ask the user a question and stop; their answer comes as their next message. "
                   "Only when you cannot go on without it.")
    Args = ClarifyArgs
    deferred = True
    brief = "ask the user a question with up to 4 choices"

    async def run(self, ctx: ToolContext, args: ClarifyArgs) -> str:
        if ctx.review_note is not None or not PLATFORMS[ctx.platform].interactive:
            raise ToolRetry("nobody is here to answer a question; decide yourself")
        choices = [" ".join(c.split())[:60] for c in args.choices]
        if any(not c for c in choices) or len(set(choices)) != len(choices):
            raise ToolRetry("each choice needs its own non-empty text")
        if ctx.asked is not None:
            raise ToolRetry("one question per turn")
        ctx.asked = ask(ctx.store, user_id=ctx.user_id, session_id=ctx.session_id,
                        chat_key=ctx.chat_key, account=ctx.account,
                        question=args.question.strip(), choices=choices,
                        inbox_id=ctx.inbox_id)
        return "Asked. Stop here: the user's answer comes as their next message."
