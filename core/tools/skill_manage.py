"""``skill_manage``: create and improve skills. Every change is a new version (rollback-able)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from core.asking.confirm import hold_skill_write
from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry
from core.lanes import blocking

Action = Literal["create", "patch", "edit", "delete", "write_file", "remove_file"]
NEEDS = {
    "create": ("content",),
    "edit": ("content",),
    "patch": ("old_string", "new_string"),
    "write_file": ("file_path", "file_content"),
    "remove_file": ("file_path",),
    "delete": (),
}


class SkillManageArgs(BaseModel):
    action: Action = Field(description="What to do.")
    name: str = Field(description="The skill's name: lowercase words joined by '-'.")
    content: str | None = Field(
        default=None,
        description="create/edit: the whole SKILL.md, YAML front matter (name, description: "
        "what it does and when to use it) then the Markdown procedure.",
    )
    old_string: str | None = Field(
        default=None, description="patch: the exact passage to replace (unique in the file)."
    )
    new_string: str | None = Field(default=None, description="patch: the replacement text.")
    replace_all: bool = Field(default=False, description="patch: replace every occurrence.")
    file_path: str | None = Field(
        default=None,
        description="write_file/remove_file (and patch of a file other than SKILL.md): a path "
        "under references/, scripts/, assets/ or templates/.",
    )
    file_content: str | None = Field(default=None, description="write_file: the file's text.")


class SkillManage(Tool):
    name = "skill_manage"
    deferred = True
    brief = "create or fix skills"
    description = (
        "Create or improve a skill (a reusable procedure, SKILL.md). create: a new skill; "
        "patch: replace one exact passage (the usual fix); edit: rewrite SKILL.md; write_file / "
        "remove_file: files under references/, scripts/, assets/; delete: archive it. Look at "
        "existing skills first: a near-duplicate is refused in favour of patching it."
    )
    Args = SkillManageArgs

    async def run(self, ctx: ToolContext, args: SkillManageArgs) -> str:
        from core.skills.library import SkillLibrary
        from core.skills.manage import SkillEditor

        missing = [f for f in NEEDS[args.action] if getattr(args, f) is None]
        if missing:
            raise ToolRetry(f"action {args.action!r} needs {', '.join(missing)}")
        editor = SkillEditor(
            SkillLibrary(ctx.store, ctx.settings), ctx.user_id, provenance="agent",
            note=ctx.review_note,
        )
        change = args.model_dump()
        if ctx.tainted_by:  # this turn read untrusted content: the user confirms first
            return hold_skill_write(ctx, change)
        # A skill's files (up to 1 MiB each) are scanned before they are stored: a thread's
        # work, not the event loop's.
        outcome = await blocking("skills", ctx.user_id, editor.apply, change,
                                 what="saving the skill")
        return outcome.message
