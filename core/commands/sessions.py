"""Session commands: /compress (summarise the older part of this session now), /title."""

from __future__ import annotations

from core.commands import CommandContext, CommandResult, command
from core.errors import ConfigError
from core.lanes import blocking
from core.messages import Message


@command("compress", "summarise the older part of this session now (nothing is deleted)")
async def compress(ctx: CommandContext, args: str) -> CommandResult:
    from core.sessions.compression import fit_context

    router = ctx.services.router
    user = await blocking("store", ctx.user_id, ctx.store.users.get, ctx.user_id,
                          what="/compress")
    try:
        model = router.main(user.model)
    except ConfigError as exc:
        return CommandResult(reply=f"Iris is not configured: {exc}")
    system = Message(role="system", content=ctx.session.system_prompt or "")
    outcome = await fit_context(
        ctx.store, ctx.settings, router, model, ctx.user_id, ctx.session.id, system, None,
        force=True,
    )
    def record() -> None:
        for usage in outcome.usage:
            ctx.store.usage.record(ctx.user_id, usage, session_id=ctx.session.id, inbox_id=None)

    await blocking("store", ctx.user_id, record, what="/compress")
    if outcome.error:
        return CommandResult(reply=f"Compression failed; the conversation is unchanged "
                                   f"({outcome.error}).")
    if not outcome.compacted:
        return CommandResult(reply="Nothing to compress yet: this session is short.")
    return CommandResult(reply=(
        f"Compressed {outcome.compacted} older messages into a summary "
        f"(prompt ~{outcome.before_tokens:,} → ~{outcome.after_tokens:,} tokens). They stay "
        "stored and searchable."
    ))


@command("title", "show or set this session's title: /title [new title]")
def title(ctx: CommandContext, args: str) -> CommandResult:
    text = " ".join(args.split())[:80]
    if not text:
        current = ctx.store.sessions.get(ctx.user_id, ctx.session.id).title
        return CommandResult(reply=f"This session: {current or '(untitled)'} [{ctx.session.id}]")
    ctx.store.transcripts.set_title(ctx.user_id, ctx.session.id, text, only_if_empty=False)
    return CommandResult(reply=f"Session titled: {text}")
