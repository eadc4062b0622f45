"""``/skills`` lists or finds skills; ``/<skill-name> …`` loads that skill into the turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.commands import FALLBACKS, CommandContext, CommandResult, command
from core.lanes import blocking

if TYPE_CHECKING:
    from core.skills.library import SkillLibrary
    from core.skills.records import SkillEntry

LISTED = 60
MATCHES = 8


def _library(ctx: CommandContext) -> SkillLibrary:
    from core.skills.library import SkillLibrary

    return SkillLibrary(ctx.store, ctx.settings)


@command("skills", "list your skills, or find some: /skills [words]; use one with /<name>; "
         "/skills pending (held writes and quarantined imports), /skills review NAME, "
         "/skills share NAME [TEAM]")
async def list_skills(ctx: CommandContext, args: str) -> CommandResult:

    from core.skills.index import matches

    verb, _, rest = args.strip().partition(" ")
    if verb.lower() == "share":
        return await share(ctx, rest.split())
    if verb.lower() in ("pending", "approve", "reject", "review"):
        from core.commands.held import held_writes

        return await held_writes(ctx, "skill", verb.lower(), rest.strip())
    library = _library(ctx)
    entries = library.entries(ctx.user_id)
    if not entries:
        return CommandResult(reply="No skills yet.")
    if args:
        hits = await blocking("prompt", ctx.user_id, matches, library, ctx.user_id, args,
                              limit=MATCHES, entries=entries, what="ranking skills")
        if not hits:
            return CommandResult(reply=f"No skill matches “{args}”. /skills lists them all.")
        lines = [f"/{e.name} — {_short(e.description)}" for e in hits]
        return CommandResult(reply="\n".join(["Best matches:", *lines]))
    lines = [f"/{e.name} — {_short(e.description)}{_usage(e)}" for e in entries[:LISTED]]
    if len(entries) > LISTED:
        lines.append(f"… and {len(entries) - LISTED} more: /skills WORDS finds one.")
    header = f"{len(entries)} skills (type /<name> and your request to use one):"
    return CommandResult(reply="\n".join([header, *lines]))


async def share(ctx: CommandContext, words: list[str]) -> CommandResult:
    """``/skills share NAME [TEAM]``: propose one of your own skills to a team."""
    from core.errors import IrisUsageError
    from core.teams.skills import share as share_skill

    if not words or len(words) > 2:
        return CommandResult(reply="Usage: /skills share NAME [TEAM]")
    from core.teams.acting import actor

    team = words[1] if len(words) > 1 else None
    try:
        # in a group the sender shares one of their own skills (never the group's)
        who = await blocking("store", ctx.user_id, actor, ctx.store, ctx.user_id, ctx.account,
                             what="who is sharing")
        reply = await blocking("skills", ctx.user_id, share_skill, _library(ctx), who.user_id,
                               team, words[0], what="sharing a skill")
    except IrisUsageError as exc:
        return CommandResult(reply=f"Nothing shared: {exc}")
    return CommandResult(reply=reply)


def _usage(entry: SkillEntry) -> str:
    from core.skills.index import usage_line

    return f" ({usage_line(entry.usage)})" if entry.usage.used else ""


def _short(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rsplit(" ", 1)[0] + "…"


def invocation_context(name: str, skill_md: str, files: list[str]) -> str:
    listed = f"\nIts files (skill_view(name='{name}', file_path=...)): {', '.join(files)}" \
        if files else ""
    return (
        f"The user invoked the skill /{name}. Follow it for this request.\n"
        f"<skill name=\"{name}\">\n{skill_md}\n</skill>{listed}"
    )


async def run_skill(ctx: CommandContext, name: str, args: str) -> CommandResult | None:
    """``/<skill-name> [request]``: the skill's SKILL.md goes into this turn's prompt."""
    library = _library(ctx)
    if library.find(ctx.user_id, name) is None:
        return None
    skill = library.snapshot(ctx.user_id, name)
    library.record(ctx.user_id, [name], "used")
    extra = invocation_context(name, skill.text(), [p for p in skill.paths if p != "SKILL.md"])
    request = args or f"Carry out the {name} skill. Ask me for anything it needs."
    return CommandResult(continue_with=request, extra_context=extra)


if run_skill not in FALLBACKS:
    FALLBACKS.append(run_skill)
