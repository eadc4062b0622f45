"""``/approve N``, ``/approve list``, ``/approve deny N``: the user's held commands
(``core.approvals`` holds them). An approved command runs exactly as stored, once, in the
user's sandbox, and the turn continues so the model sees the result and reports it."""

from __future__ import annotations

import re

from core.commands import CommandContext, CommandResult
from core.platforms.registry import PLATFORMS
from core.store.acting import HeldCommand, HeldCommands

RESULT_CHARS = 4_000
_NUMBER = re.compile(r"#?(\d{1,9})")
_DENY_WORDS = frozenset({"deny", "no", "reject", "cancel", "drop"})


def _describe(held: HeldCommand, at: float) -> str:
    minutes = max(0, round((held.expires_at - at) / 60))
    where = f" in {held.workdir}" if held.workdir else ""
    return f"#{held.number}: `{held.command}`{where} ({held.reason}; expires in {minutes} min)"


def _listing(pending: list[HeldCommand], at: float) -> str:
    lines = ["Commands waiting for your approval:"]
    lines += [_describe(held, at) for held in pending]
    lines.append("Send /approve N to run one, or /approve deny N to drop it.")
    return "\n".join(lines)


async def approve_pending(ctx: CommandContext, arg: str) -> CommandResult | None:
    """Handle ``/approve [N | deny N | list]`` for held commands.

    Returns None when this is not about held commands (an argument of another shape, or a
    bare ``/approve`` while nothing is held), so the caller can try pairing codes instead.
    """
    words = arg.strip().split()
    held = ctx.store.held
    pending = held.pending(ctx.user_id)
    if not words:
        if not pending:
            return None
        if len(pending) > 1:
            return CommandResult(reply=_listing(pending, ctx.store.clock.now()))
        return await _run(ctx, held, pending[0].number)
    if words == ["list"]:
        if not pending:
            return CommandResult(reply="No commands are waiting for your approval.")
        return CommandResult(reply=_listing(pending, ctx.store.clock.now()))
    deny = words[0].lower() in _DENY_WORDS
    rest = words[1:] if deny else words
    if len(rest) != 1 or not (match := _NUMBER.fullmatch(rest[0])):
        return None
    number = int(match[1])
    if deny:
        if held.deny(ctx.user_id, number):
            return CommandResult(reply=f"Dropped held command #{number}; it will not run.")
        return CommandResult(reply=_not_pending(held, ctx.user_id, number))
    return await _run(ctx, held, number)


def _not_pending(held: HeldCommands, user_id: str, number: int) -> str:
    found = held.get(user_id, number)
    if found is None:
        return f"There is no held command #{number}."
    if found.status == "pending":
        return f"Held command #{number} expired; ask me again if it is still needed."
    return f"Held command #{number} was already {found.status}."


async def _run(ctx: CommandContext, held: HeldCommands, number: int) -> CommandResult:
    if not PLATFORMS[ctx.platform].interactive:
        return CommandResult(
            reply="Held commands can only be approved by a person in a chat, not from "
            f"{ctx.platform}."
        )
    if not held.claim(ctx.user_id, number):
        return CommandResult(reply=_not_pending(held, ctx.user_id, number))
    command = held.get(ctx.user_id, number)
    assert command is not None
    workspaces = ctx.services.workspaces
    timeout = min(command.timeout or ctx.settings.sandbox_timeout, ctx.settings.sandbox_max_timeout)
    try:
        async with workspaces.use(ctx.user_id) as box:
            result = await box.exec(command.command, cwd=command.workdir, timeout=timeout)
    except Exception as exc:
        output, exit_code = f"could not run: {exc}", None
    else:
        from core.acting.output import format_exec

        output = format_exec(result, ctx.settings.max_tool_output_chars)
        exit_code = result.exit_code
    held.finish(ctx.user_id, number, exit_code=exit_code, output=output[:RESULT_CHARS])
    from core.security.untrusted import wrap_untrusted

    facts = (
        f"The user approved held command #{number} (`{command.command}`), and it has now run "
        f"once in the workspace. Its result:\n{wrap_untrusted('terminal', output)}\n"
        "Tell the user what happened, then carry on with the task if there is more to do."
    )
    return CommandResult(continue_with=f"/approve {number}", extra_context=facts)
