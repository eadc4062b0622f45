"""/stop: cancel the chat's running turn. Handled at ingress (``core.turn.cancel``), before the
inbox, so it never waits behind the turn it stops; this entry lists it in /help and answers a
/stop that reaches a turn some other way."""

from __future__ import annotations

from core.commands import CommandContext, CommandResult, command


@command("stop", "stop the turn that is running in this chat")
async def stop(ctx: CommandContext, args: str) -> CommandResult:
    return CommandResult(reply="Nothing is running right now.")
