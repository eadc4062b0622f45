"""``/persona``: how Iris is with you — show it, set it, clear it (your own scope only)."""

from __future__ import annotations

from core.commands import CommandContext, CommandResult, command
from core.memory.persona import PersonaRefused, clear_persona, get_persona, set_persona

USAGE = "Usage: /persona | /persona set TEXT | /persona clear"


def _own_scope(ctx: CommandContext) -> bool:
    """A person changes their own persona; a group's is changed only by Iris' owner."""
    return ctx.is_owner or ctx.store.users.get(ctx.user_id).kind != "group"


@command("persona", "show how Iris is with you; /persona set TEXT; /persona clear")
def persona(ctx: CommandContext, args: str) -> CommandResult:
    words = args.strip().split(maxsplit=1)
    verb = words[0].lower() if words else ""
    rest = words[1].strip() if len(words) > 1 else ""
    if not verb:
        row = get_persona(ctx.store, ctx.user_id)
        if row is None:
            return CommandResult(reply="No persona set. Set one with /persona set TEXT.")
        return CommandResult(reply=f"Your persona ({row.source}):\n{row.content}")
    if verb not in ("set", "clear") or (verb == "set" and not rest):
        return CommandResult(reply=USAGE)
    if not _own_scope(ctx):
        return CommandResult(reply="Only Iris' owner can change a group's persona.")
    if verb == "clear":
        done = clear_persona(ctx.store, ctx.user_id)
        return CommandResult(reply="Persona cleared; new sessions start without it." if done
                             else "No persona was set.")
    try:
        set_persona(ctx.store, ctx.user_id, rest, source="user", by=ctx.account)
    except PersonaRefused as exc:
        return CommandResult(reply=f"Persona not changed: {exc}.")
    return CommandResult(reply="Persona saved; it applies from your next session (/new).")
