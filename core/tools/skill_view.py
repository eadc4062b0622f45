"""``skill_view``: load a skill (L1: SKILL.md and its file list) or one of its files (L2)."""

from __future__ import annotations

import difflib

from pydantic import BaseModel, Field

from core.contracts.toolkit import Tool, ToolContext
from core.errors import NotFound, ToolRetry


class SkillViewArgs(BaseModel):
    name: str
    file_path: str | None = Field(default=None, description="e.g. 'references/api.md'.")


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


class SkillView(Tool):
    name = "skill_view"
    description = (
        "Load a skill before a task it covers: its SKILL.md and file list, or one file."
    )
    Args = SkillViewArgs

    async def run(self, ctx: ToolContext, args: SkillViewArgs) -> str:
        from core.lanes import in_store_lane

        return await in_store_lane(ctx.user_id, self._view, ctx, args)

    def _view(self, ctx: ToolContext, args: SkillViewArgs) -> str:
        """The skill from the index and the object store (in the ``store`` lane)."""
        from core.skills.library import SkillLibrary

        library = SkillLibrary(ctx.store, ctx.settings)
        name = args.name.strip().removeprefix("/")
        try:
            skill = library.snapshot(ctx.user_id, name)
        except NotFound:
            names = [e.name for e in library.entries(ctx.user_id)]
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(close)}?" if close else " skills_list() lists them."
            raise ToolRetry(f"no skill named {name!r}.{hint}") from None
        limit = ctx.settings.max_tool_output_chars
        if args.file_path:
            path = args.file_path.strip().removeprefix("./")
            if path not in skill.shas:
                files = ", ".join(p for p in skill.paths if p != "SKILL.md") or "none"
                raise ToolRetry(f"skill {name!r} has no file {path!r} (its files: {files})")
            data = skill.data(path)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return f"{path} in skill {name!r} is a binary file ({_size(len(data))}); not shown."
            return text if len(text) <= limit else text[:limit] + "\n[… truncated]"
        if ctx.review_note is None:  # a post-turn review looking is not a use
            library.record(ctx.user_id, [name], "used")
        entry = skill.entry
        version = "bundled" if entry.bundled else f"version {entry.version}, {entry.kind}"
        lines = [f"Skill {name} ({version})"]
        others = [p for p in skill.paths if p != "SKILL.md"]
        if others:
            lines.append(f"Files (open one with skill_view(name='{name}', file_path=...)):")
            lines += [f"- {p} ({_size(skill.sizes.get(p, 0))})" for p in others]
        text = "\n".join([*lines, "", skill.text()])
        return text if len(text) <= limit else text[:limit] + "\n[… truncated]"
