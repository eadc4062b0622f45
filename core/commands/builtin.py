"""Built-in commands: /new, /help, /usage, /model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.commands import CommandContext, CommandResult, command, help_text
from core.commands.approve import is_owner
from core.errors import IrisUsageError
from core.model.choice import allowed_models, check_choice

if TYPE_CHECKING:
    from core.store.usage import UsageTotals


@command("new", "start a new session (the old one stays searchable)")
def new_session(ctx: CommandContext, args: str) -> CommandResult:
    session = ctx.store.sessions.start(ctx.user_id, ctx.chat_key, ctx.surface or ctx.platform)
    return CommandResult(reply="Started a new session.", session=session)


@command("help", "list the commands")
async def show_help(ctx: CommandContext, args: str) -> CommandResult:
    return CommandResult(reply=help_text())


# Calls other than chat, named in /usage under the all-time line (they are in its totals).
KIND_LABELS = {"vision": "image questions (vision)", "speech": "spoken replies (speech)",
               "transcription": "voice notes transcribed (transcription)"}


@command("usage", "tokens and cost of this session and in total")
def usage(ctx: CommandContext, args: str) -> CommandResult:
    session = ctx.store.usage.totals(ctx.user_id, session_id=ctx.session.id)
    total = ctx.store.usage.totals(ctx.user_id)

    def cost(t: UsageTotals) -> str:
        if t.cost_usd is None:
            return "cost unknown"
        if t.cost_usd == 0 and ctx.settings.model_free:
            return "cost 0 (local model)"
        return f"${t.cost_usd:.4f}"

    def line(label: str, t: UsageTotals) -> str:
        cache = (f", cache read {t.cache_read_tokens} / write {t.cache_write_tokens}"
                 if t.cache_read_tokens or t.cache_write_tokens else "")
        return (
            f"{label}: {t.calls} model calls, {t.prompt_tokens} prompt + "
            f"{t.completion_tokens} completion tokens{cache}, {cost(t)}"
        )

    reply = f"{line('This session', session)}\n{line('All time', total)}"
    for kind, t in ctx.store.usage.by_kind(ctx.user_id).items():
        if kind in KIND_LABELS:
            calls = "1 call" if t.calls == 1 else f"{t.calls} calls"
            reply += f"\n  of which {KIND_LABELS[kind]}: {calls}, {cost(t)}"
    summary = ctx.store.compaction.latest(ctx.user_id, ctx.session.id)
    if summary is not None:
        reply += f"\nCompressed: {summary.compacted_count} earlier messages are summarised."
    return CommandResult(reply=reply)


@command("model", "show or switch your main model: /model [litellm-model-string | default]")
def model(ctx: CommandContext, args: str) -> CommandResult:
    user = ctx.store.users.get(ctx.user_id)
    if not args:
        current = user.model or ctx.settings.model or "(none configured)"
        choices = ", ".join(allowed_models(ctx.settings)) or "none"
        return CommandResult(reply=f"Your model: {current}. Switch with /model <name> "
                                   f"(allowed: {choices}).")
    if args in ("default", "reset"):
        ctx.store.users.set_model(ctx.user_id, None)
        return CommandResult(reply=f"Back to the default model ({ctx.settings.model}).")
    try:
        name = check_choice(ctx.settings, args, owner=is_owner(ctx))
    except IrisUsageError as exc:
        return CommandResult(reply=f"Model not changed: {exc}. Owners are the accounts in "
                             f"IRIS_OWNER_ACCOUNTS (this one is {ctx.account}); in `iris dev` "
                             "with none set, the terminal's user (http:$USER) is the owner.")
    ctx.store.users.set_model(ctx.user_id, name)
    return CommandResult(reply=f"Switched your model to {name}.")
