"""``skills_list``: every skill the user has, by category, or the best matches for a query."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.contracts.toolkit import Tool, ToolContext
from core.lanes import blocking

MAX_LISTED = 150
MATCHES = 15
SHORT = 140


class SkillsListArgs(BaseModel):
    category: str | None = Field(default=None, description="Only skills in this category.")
    query: str | None = Field(
        default=None, description="Words describing the task; returns the best matches first."
    )


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHORT else text[: SHORT - 1].rsplit(" ", 1)[0] + "…"


class SkillsList(Tool):
    name = "skills_list"
    deferred = True
    brief = "list or search all skills"
    description = (
        "List the available skills (name, category, description), optionally only one category "
        "or only those matching a query. Use it when the skill index in your instructions does "
        "not show a skill for the task at hand."
    )
    Args = SkillsListArgs

    async def run(self, ctx: ToolContext, args: SkillsListArgs) -> str:

        from core.skills.index import matches
        from core.skills.library import SkillLibrary

        library = SkillLibrary(ctx.store, ctx.settings)
        entries = library.entries(ctx.user_id)
        if args.category:
            wanted = args.category.strip().casefold()
            entries = [e for e in entries if (e.category or "").casefold() == wanted]
            if not entries:
                return f"No skills in category {args.category!r}."
        if args.query and args.query.strip():
            hits = await blocking("prompt", ctx.user_id, matches, library, ctx.user_id, args.query,
                                  limit=MATCHES, entries=entries, what="ranking skills")
            if not hits:
                return f"No skill matches {args.query!r}."
            return "\n".join(f"- {e.name} [{e.category or 'general'}]: {_short(e.description)}"
                             for e in hits)
        by_category = sorted(entries, key=lambda e: ((e.category or "general").casefold(), e.name))
        count = f"{len(entries)} skill" + ("" if len(entries) == 1 else "s")
        lines, current = [f"{count}:"], None
        for entry in by_category[:MAX_LISTED]:
            category = entry.category or "general"
            if category != current:
                lines.append(f"{category}:")
                current = category
            lines.append(f"- {entry.name}: {_short(entry.description)}")
        if len(entries) > MAX_LISTED:
            lines.append(f"… and {len(entries) - MAX_LISTED} more; narrow with category or query.")
        return "\n".join(lines)
