"""``memory``: add, replace or remove entries of the user's two bounded memory stores."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.asking.confirm import hold_memory_write
from core.contracts.toolkit import Tool, ToolContext
from core.errors import IrisUsageError, ToolRetry
from core.memory.book import Limits, MemoryBook, MemoryBusy
from core.memory.models import TARGETS, MemoryOperation, Target, summary
from core.memory.ops import Author, MemoryRefused, check_content
from core.model.llm import ToolSpec

MAX_OPERATIONS = 20
ASKED = re.compile(
    r"\b(?:remember|memori[sz]e|don'?t forget|do not forget|keep in mind|make a note|note (?:that"
    r"|this|down)|save (?:this|that|it)|for future reference|from now on)\b",
    re.I,
)


def _check(action: str | None, content: str | None, old_text: str | None) -> None:
    if action in ("add", "replace") and not (content and content.strip()):
        raise ValueError(f"{action} needs a non-empty 'content'")
    if action in ("replace", "remove") and not (old_text and old_text.strip()):
        raise ValueError(f"{action} needs 'old_text': a unique part of the entry to change")


class MemoryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["add", "replace", "remove"] | None = Field(
        default=None, description="Or use operations."
    )
    target: Target | Literal["team"] = Field(
        default="memory",
        description="user: who the user is; memory: your notes; team: shared (add only).",
    )
    team: str | None = Field(default=None, description="Team name, if several.")
    content: str | None = Field(
        default=None, description="One self-contained fact (add, replace)."
    )
    old_text: str | None = Field(
        default=None,
        description="Unique substring of the entry (replace, remove).",
    )
    operations: list[MemoryOperation] | None = Field(
        default=None,
        max_length=MAX_OPERATIONS,
        description="Several {action, target, content, old_text} changes, all or none.",
    )

    @model_validator(mode="after")
    def _one_form(self) -> MemoryArgs:
        if self.operations is not None:
            if self.action or self.content or self.old_text:
                raise ValueError("give either 'operations' or a single action, not both")
            if not self.operations:
                raise ValueError("'operations' is empty")
            return self
        if self.action is None:
            raise ValueError("give an 'action' (add, replace, remove) or a list of 'operations'")
        _check(self.action, self.content, self.old_text)
        if self.target == "team" and self.action != "add":
            raise ValueError("team notes can only be added; an admin edits the team's notes")
        return self

    def to_operations(self) -> list[MemoryOperation]:
        if self.operations is not None:
            return list(self.operations)
        assert self.action is not None and self.target != "team"
        return [
            MemoryOperation(
                action=self.action, target=self.target, content=self.content,
                old_text=self.old_text,
            )
        ]


def user_asked(ctx: ToolContext) -> bool:
    """Whether the message that started this turn asked to remember something."""
    if ctx.inbox_id is None:
        return False
    try:
        text = ctx.store.inbox.get(ctx.user_id, ctx.inbox_id).message.text
    except Exception:
        return False
    return bool(ASKED.search(text))


def write_memory(
    ctx: ToolContext, operations: list[MemoryOperation], provenance: str, who: str | None = None
) -> str:
    """The one write path of the tool, the post-turn review and imports: scanned,
    all-or-nothing, compare-and-set. Raises ToolRetry with the reason when refused."""
    limits = Limits.from_settings(ctx.settings)
    if ctx.tainted_by:  # this turn read untrusted content: the user confirms first
        try:  # what would be refused anyway is refused now, not queued
            for op in operations:
                if op.content is not None:
                    check_content(op.content, op.target, limits.as_dict()[op.target])
        except MemoryRefused as exc:
            raise ToolRetry(str(exc)) from None
        return hold_memory_write(ctx, operations, provenance, who or ctx.account)
    author = Author(provenance=provenance, who=who or ctx.account, session_id=ctx.session_id)
    try:
        result = MemoryBook(ctx.store).write(
            ctx.user_id, operations, limits=limits, author=author
        )
    except (MemoryRefused, MemoryBusy) as exc:
        raise ToolRetry(str(exc)) from None
    return summary(result)


def write_team_note(ctx: ToolContext, content: str, team: str | None) -> str:
    """A note to the user's team: refused, held for an admin, or live (``core.teams.notes``)."""
    from core.teams.notes import pick_team, write_note, written

    try:
        team_id = pick_team(ctx.store, ctx.user_id, team)
        tainted = ", ".join(sorted(ctx.tainted_by)) or None
        result = write_note(ctx.store, ctx.user_id, team_id, content, tainted_by=tainted)
    except IrisUsageError as exc:
        raise ToolRetry(str(exc)) from None
    return written(result, ctx.store.teams.find(ctx.user_id, team_id).name)


class Memory(Tool):
    name = "memory"
    description = (
        "Long-term memory, shown at the start of every session. Save durable facts "
        "proactively (not trivia, one-off details or secrets). add: content; replace: old_text "
        "+ content; remove: old_text. Full stores archive their least used entries."
    )
    Args = MemoryArgs

    def spec(self) -> ToolSpec:
        """A flat schema (no $ref, no nulls): small models follow it more reliably."""
        fields = MemoryArgs.model_fields
        one = {
            "action": {"type": "string", "enum": ["add", "replace", "remove"],
                       "description": fields["action"].description},
            "target": {"type": "string", "enum": [*TARGETS, "team"], "default": "memory",
                       "description": fields["target"].description},
            "team": {"type": "string", "description": fields["team"].description},
            "content": {"type": "string", "description": fields["content"].description},
            "old_text": {"type": "string", "description": fields["old_text"].description},
        }
        item = {"type": "object", "required": ["action"]}  # the fields above, described once
        operations = {"type": "array", "items": item, "maxItems": MAX_OPERATIONS,
                      "description": fields["operations"].description}
        return ToolSpec(
            name=self.name, description=self.description,
            parameters={"type": "object", "properties": {**one, "operations": operations},
                        "additionalProperties": False},
        )

    async def run(self, ctx: ToolContext, args: MemoryArgs) -> str:
        from core.lanes import in_store_lane

        return await in_store_lane(ctx.user_id, self.write, ctx, args)

    def write(self, ctx: ToolContext, args: MemoryArgs) -> str:
        """The write, in the ``store`` lane (its scans and round trips off the event loop)."""
        if args.target == "team":
            return write_team_note(ctx, args.content or "", args.team)
        provenance = "user" if user_asked(ctx) else "agent"
        return write_memory(ctx, args.to_operations(), provenance)
